import { mkdtempSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DIRECT_SOURCE,
  isSwitchyardError,
  createStepContext,
  type JsonObject,
  type StepContext,
  type SwitchyardEvent,
  type ToolAccess,
  type ToolExecutor,
  type ToolOutput,
} from '@switchyard/protocol';

/** A fresh workspace directory (real path, under the OS temp dir). */
export function makeWorkspace(prefix = 'tool-exec-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

let callCounter = 0;

/** Calls an executor the way the registry would, with a function payload. */
export async function callTool(
  executor: ToolExecutor,
  args: JsonObject,
  context: { step?: Partial<StepContext>; signal?: AbortSignal; tools?: ToolAccess; events?: SwitchyardEvent[] } = {},
): Promise<ToolOutput> {
  const callId = `call-${++callCounter}`;
  return executor.handle({
    callId,
    toolName: executor.name,
    source: DIRECT_SOURCE,
    payload: { kind: 'function', arguments: JSON.stringify(args) },
    signal: context.signal ?? new AbortController().signal,
    step: createStepContext(context.step),
    emit: (event) => context.events?.push(event),
    tools: context.tools,
  });
}

/** The text the model reads for an output. */
export function modelText(output: ToolOutput): string {
  const item = output.toResponseItem('call', { kind: 'function', arguments: '{}' });
  if (item.type !== 'function_call_output' || typeof item.output !== 'string') throw new Error(`unexpected item ${JSON.stringify(item)}`);
  return item.output;
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

/** Polls `check` every 50 ms until it returns true or `timeoutMs` passes; returns the last answer. */
export async function eventually(check: () => boolean, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** A unique marker for process-survival tests (a number `sleep` accepts). */
export function uniqueSleepSeconds(): string {
  return `${300 + Math.floor(Math.random() * 600)}.${Math.floor(Math.random() * 1e6)}`;
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

/** The Code Mode value of an output (exec_command's result object). */
export function codeModeValue(output: ToolOutput): JsonObject {
  return output.codeModeResult({ kind: 'function', arguments: '{}' }) as JsonObject;
}
