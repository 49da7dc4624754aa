import { errorMessage } from '@switchyard/protocol';
import { ABORTED_MESSAGE, MAX_TIMER_MS, timeoutMessage } from './command-runner';
import type { ConfiguredFunctionHandler } from './hooks-config';
import type { HandlerRunResult } from './hook-output';
import type { HookInput } from './hook-payload';


/**
 * Runs an in-process handler with a command hook's semantics: it gets its own copy of the stdin
 * object (parsed from `inputJson`, exactly what a command reads), its return value stands for
 * stdout (exit 0), a throw or rejection is a failure, and at its timeout (or when the call is
 * cancelled) it is abandoned with its signal aborted. The timeout is acted on one event-loop turn
 * after its timer fires, so a handler whose I/O completed while the host thread was stalled past
 * the deadline still gets to answer. Never rejects.
 */
export async function runFunctionHook(handler: Pick<ConfiguredFunctionHandler, 'run' | 'timeoutSec'>, inputJson: string, signal: AbortSignal): Promise<HandlerRunResult> {
  const controller = new AbortController();
  let finished = false;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<HandlerRunResult>((resolve) => {
    const stop = (error: string) => {
      if (finished) return;
      controller.abort();
      resolve({ exitCode: null, stdout: '', stderr: '', error });
    };
    onAbort = () => stop(ABORTED_MESSAGE);
    if (signal.aborted) return stop(ABORTED_MESSAGE);
    signal.addEventListener('abort', onAbort, { once: true });
    // Pending I/O callbacks run before setImmediate: an answer that is already there wins.
    timer = setTimeout(() => setImmediate(() => stop(timeoutMessage(handler.timeoutSec))), Math.min(handler.timeoutSec * 1000, MAX_TIMER_MS));
  });
  const ran = (async (): Promise<HandlerRunResult> => {
    try {
      const output = await handler.run(JSON.parse(inputJson) as HookInput, { signal: controller.signal });
      const stdout = output === undefined || output === null ? '' : JSON.stringify(output);
      return { exitCode: 0, stdout: stdout ?? '', stderr: '' };
    } catch (error) {
      return { exitCode: null, stdout: '', stderr: '', error: `function hook failed: ${errorMessage(error)}` };
    }
  })();
  try {
    return await Promise.race([ran, stopped]);
  } finally {
    finished = true;
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
