import type { ApprovalProvider, HookRunner, JsonBounds, SwitchyardEvent, ToolExecutor, ToolOutput, ToolPayload } from '@switchyard/protocol';
import { createStepContext, defineFunctionTool } from '@switchyard/kit';
import { ToolRegistry } from '../src/tool-registry';
import { createToolRouter } from '../src/tool-router';
import { ToolCallRuntime } from '../src/tool-call-runtime';
import { invokeTool } from '../src/testing/index';
import { sleep } from '@switchyard/test-helpers';

/** A router + runtime over `executors`, recording every tool-call event in order. */
export function routerSetup(executors: readonly ToolExecutor[], options: { hooks?: HookRunner; signal?: AbortSignal; hookInputBounds?: JsonBounds } = {}) {
  const registry = ToolRegistry.from(executors);
  const router = createToolRouter({ specs: executors.map((executor) => executor.spec), registry, hooks: options.hooks, hookInputBounds: options.hookInputBounds });
  const events: SwitchyardEvent[] = [];
  for (const type of ['tool-call-start', 'tool-call-end', 'tool-call-blocked', 'tool-call-aborted', 'tool-notification'] as const) {
    router.on(type, (event) => events.push(event));
  }
  const runtime = new ToolCallRuntime({ router, step: createStepContext(), signal: options.signal });
  return { registry, router, runtime, events };
}

/** A function call item. */
export function functionCall(name: string, args: unknown = {}, callId = `call-${name}`, namespace?: string) {
  return {
    type: 'function_call' as const,
    call_id: callId,
    name,
    ...(namespace ? { namespace } : {}),
    arguments: typeof args === 'string' ? args : JSON.stringify(args),
  };
}

export { sleep };

/** Interval a handler ran for, in performance.now() milliseconds. */
export interface Interval {
  readonly name: string;
  readonly start: number;
  readonly end: number;
}

/** A function tool that sleeps `ms`, records its interval into `log`, and answers its name. */
export function timedTool(name: string, ms: number, log: Interval[], options: { parallel?: boolean; namespace?: string } = {}): ToolExecutor {
  return defineFunctionTool({
    name,
    namespace: options.namespace,
    description: `sleeps ${ms} ms`,
    parameters: { type: 'object', properties: { label: { type: 'string' } } },
    supportsParallelToolCalls: options.parallel ?? false,
    async handle({ args }) {
      const start = performance.now();
      await sleep(ms);
      log.push({ name: typeof args.label === 'string' ? args.label : name, start, end: performance.now() });
      return name;
    },
  });
}

/** True when two intervals overlap in time. */
export function overlaps(a: Interval, b: Interval): boolean {
  return a.start < b.end && b.start < a.end;
}

/** `counted`: a tool that may run in parallel, answers `{ run: n }` and counts its runs. */
export function countedTool(): { tool: ToolExecutor; runs(): number } {
  let runs = 0;
  const tool = defineFunctionTool({
    name: 'counted',
    description: 'Counts its runs.',
    parameters: { type: 'object' },
    supportsParallelToolCalls: true,
    handle: () => ({ run: ++runs }),
  });
  return { tool, runs: () => runs };
}

/** A parallel-safe tool `name` that runs `ms` each call, recording how many of its calls run at once (`peak`) and how many ended (`done`). */
export function concurrencyProbe(name = 'probe', ms = 5) {
  const seen = { running: 0, peak: 0, done: 0 };
  const tool = defineFunctionTool({
    name,
    description: 'Runs a while.',
    parameters: { type: 'object' },
    supportsParallelToolCalls: true,
    handle: async () => {
      seen.peak = Math.max(seen.peak, ++seen.running);
      await sleep(ms);
      seen.running--;
      return { done: ++seen.done };
    },
  });
  return { tool, seen };
}

/** Invokes `executor` once through the registry's dispatch, without hooks (asking `approvals` when given); resolves with the output, rejects with the call's error. */
export async function invoke(executor: ToolExecutor, payload: ToolPayload, approvals?: ApprovalProvider): Promise<ToolOutput> {
  const result = await invokeTool(executor, payload, { callId: 'call-1', ...(approvals ? { step: { approvals } } : {}), hooks: false });
  if (result.error) throw result.error;
  return result.output;
}
