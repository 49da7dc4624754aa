import {
  displayName,
  type HookRunner,
  type ResponseItem,
  type StepContext,
  type SwitchyardEvent,
  type SwitchyardEventListener,
  type SwitchyardEventType,
  type ToolExecutor,
  type ToolPayload,
} from '@switchyard/protocol';
import { createStepContext } from '@switchyard/kit';
import { ToolCallRuntime, type DispatchResult } from './tool-call-runtime';
import { ToolRegistry } from './tool-registry';
import { createToolRouter } from './tool-router';

/** Options of {@link createExecutorHost}. */
export interface ExecutorHostOptions {
  /** The executors to serve. A duplicate name or an executor of another protocol line throws a `CONFIG` error. */
  tools: readonly ToolExecutor[];
  /** Pre/post hooks around every call. Absent: no hooks. */
  hooks?: HookRunner;
  /** The step every call runs in (cwd, approvals, clock, …); defaults as `createStepContext`. */
  step?: Partial<StepContext>;
  /** Most calls running at once; later calls wait their turn. Default 16. */
  maxConcurrentCalls?: number;
}

/**
 * Executors served outside a session (an MCP server, an AI SDK tool set): one registry, router and
 * runtime built the way a session builds a step, so a call gets the same validation, hooks,
 * result rule and cancellation as in a session.
 */
export interface ExecutorHost {
  /** The served executors, in the order given. */
  readonly tools: readonly ToolExecutor[];
  /** The executor of a display name (`sql__query`), or `undefined`. */
  find(name: string): ToolExecutor | undefined;
  /**
   * Runs one call. Resolves with the model-visible answer (failures, refusals and aborts
   * included); rejects only with a fatal error. `signal` cancels this call.
   */
  call(executor: ToolExecutor, payload: ToolPayload, options?: { signal?: AbortSignal; callId?: string }): Promise<DispatchResult>;
  /** Subscribes to the calls' lifecycle events; returns the unsubscribe function. */
  on<T extends SwitchyardEventType>(type: T, listener: SwitchyardEventListener<T>): () => void;
}

let sequence = 0;

/** Builds an {@link ExecutorHost}. Throws the registry's `CONFIG` errors. */
export function createExecutorHost(options: ExecutorHostOptions): ExecutorHost {
  const tools = Object.freeze([...options.tools]);
  const registry = ToolRegistry.from(tools);
  const router = createToolRouter({ specs: tools.map((executor) => executor.spec), registry, hooks: options.hooks });
  const runtime = new ToolCallRuntime({ router, step: createStepContext(options.step), maxConcurrentCalls: options.maxConcurrentCalls });
  const byDisplayName = new Map(tools.map((executor) => [displayName(executor.name), executor]));
  return {
    tools,
    find: (name) => byDisplayName.get(name),
    async call(executor, payload, callOptions = {}) {
      const item = executorCallItem(executor, payload, callOptions.callId ?? `host-call-${++sequence}`);
      const call = router.buildToolCall(item);
      // Every item built above is a tool call; a miss means the builder is wrong.
      if (!call) throw new Error(`executor host: ${JSON.stringify(item)} is not a tool call`);
      return runtime.handle(call, { signal: callOptions.signal });
    },
    on: (type, listener) => router.on(type, listener),
  };
}

/** The wire item a model sends to call `executor` with `payload`. */
export function executorCallItem(executor: ToolExecutor, payload: ToolPayload, callId: string): ResponseItem {
  const name = executor.name;
  const namespace = name.namespace ? { namespace: name.namespace } : {};
  switch (payload.kind) {
    case 'function':
      return { type: 'function_call', call_id: callId, name: name.name, ...namespace, arguments: payload.arguments } as ResponseItem;
    case 'custom':
      return { type: 'custom_tool_call', call_id: callId, name: name.name, ...namespace, input: payload.input } as ResponseItem;
    case 'tool-search':
      return { type: 'tool_search_call', call_id: callId, execution: 'client', arguments: payload.arguments } as ResponseItem;
  }
}
