import { processesWith, processInfo } from '@switchyard/config/proc';
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

/** Pids of `sleep <seconds>` processes (exact command line; zombies do not count). */
export function sleepProcesses(seconds: string): number[] {
  const wanted = `sleep ${seconds}`;
  return processesWith(wanted).filter((pid) => processInfo(pid)?.cmdline.join(' ') === wanted);
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

/**
 * The parent pid and command line of `pid`, or undefined once it is gone (a zombie counts as gone).
 * The command line is trimmed: a perl launcher that renamed itself (`$0`) pads it with spaces.
 */
export function processOf(pid: number): { parent: number; cmdline: string } | undefined {
  const info = processInfo(pid);
  return info === undefined || info.state === 'Z' ? undefined : { parent: info.ppid, cmdline: info.cmdline.join(' ').trim() };
}
