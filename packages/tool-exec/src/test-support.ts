import { readdirSync, readFileSync } from 'node:fs';
import {
  isSwitchyardError,
  type HookRunner,
  type JsonObject,
  type StepContext,
  type SwitchyardEvent,
  type ToolExecutor,
  type ToolOutput,
} from '@switchyard/protocol';
import { invokeTool } from '@switchyard/registry/testing';
export { codeModeValue, makeWorkspace, modelText, uniqueSleepSeconds } from '@switchyard/test-helpers';

/** The lifecycle events the runtime emits itself (the tool's own notifications are the rest). */
const RUNTIME_EVENTS = new Set(['tool-call-start', 'tool-call-end', 'tool-call-aborted', 'tool-call-blocked']);

/**
 * One function call through the registry's real dispatch (`invokeTool`). Resolves with the output;
 * a failed call rejects with its model-visible error (the message is the text the model reads), so
 * tests can name the exact answer. The tool's own notifications are appended to `context.events`;
 * `context.tools` are registered beside it (`invocation.tools` reaches them). No hook runner unless
 * `context.hooks` gives one.
 */
export async function callTool(
  executor: ToolExecutor,
  args: JsonObject,
  context: { step?: Partial<StepContext>; signal?: AbortSignal; tools?: readonly ToolExecutor[]; events?: SwitchyardEvent[]; hooks?: HookRunner } = {},
): Promise<ToolOutput> {
  const result = await invokeTool(executor, { kind: 'function', arguments: JSON.stringify(args) }, {
    step: context.step,
    signal: context.signal,
    tools: context.tools,
    hooks: context.hooks ?? false,
  });
  context.events?.push(...result.events.filter((event) => !RUNTIME_EVENTS.has(event.type)));
  if (result.error) throw result.error;
  return result.output;
}

/** Pids of `sleep <seconds>` processes (exact command line; zombies have none and do not count). */
export function sleepProcesses(seconds: string): number[] {
  const wanted = `sleep ${seconds}`;
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      if (cmdline === wanted) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

/** The message and code a call failed with; throws if it succeeded. */
export async function failureOf(promise: Promise<unknown>): Promise<{ message: string; code?: string }> {
  try {
    await promise;
  } catch (error) {
    return { message: (error as Error).message, code: isSwitchyardError(error) ? error.code : undefined };
  }
  throw new Error('expected the call to fail');
}

/** The parent pid and command line of `pid`, or undefined once it is gone (a zombie counts as gone). */
export function processOf(pid: number): { parent: number; cmdline: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return undefined;
    return { parent: Number(fields[1]), cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim() };
  } catch {
    return undefined;
  }
}
