import { ABORTED_MESSAGE, MAX_TIMER_MS, timeoutMessage } from './command-runner';
import type { HandlerRunResult } from './hook-output';

/**
 * Runs an in-process handler's work (a function hook, an HTTP request, an MCP tool call) with a
 * command hook's deadline semantics: at `timeoutSec` (or when `signal`, the call's, aborts) the
 * work's own signal aborts and the run ends as timed out (or aborted) without waiting for it. The
 * timeout is acted on one event-loop turn after its timer fires, so work whose I/O completed while
 * the host thread was stalled past the deadline still gets to answer. Never rejects: a rejection of
 * `work` becomes a failed run described by `describeFailure`.
 */
export async function runWithDeadline(
  timeoutSec: number,
  signal: AbortSignal,
  work: (signal: AbortSignal) => Promise<HandlerRunResult>,
  describeFailure: (error: unknown) => string,
): Promise<HandlerRunResult> {
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
    timer = setTimeout(() => setImmediate(() => stop(timeoutMessage(timeoutSec))), Math.min(timeoutSec * 1000, MAX_TIMER_MS));
  });
  const ran = (async (): Promise<HandlerRunResult> => {
    try {
      return await work(controller.signal);
    } catch (error) {
      return { exitCode: null, stdout: '', stderr: '', error: describeFailure(error) };
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
