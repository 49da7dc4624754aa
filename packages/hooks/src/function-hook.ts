import { errorMessage } from '@switchyard/protocol';
import { ABORTED_MESSAGE, MAX_TIMER_MS, timeoutMessage } from './command-runner';
import type { ConfiguredHandler } from './hooks-config';
import type { HandlerRunResult } from './hook-output';
import type { HookInput } from './hook-payload';


/**
 * Runs an in-process handler with a command hook's semantics: it gets a copy of the stdin object,
 * its return value stands for stdout (exit 0), a throw or rejection is a failure, and at its
 * timeout (or when the call is cancelled) it is abandoned with its signal aborted. Never rejects.
 */
export async function runFunctionHook(handler: Pick<ConfiguredHandler, 'run' | 'timeoutSec'>, input: HookInput, signal: AbortSignal): Promise<HandlerRunResult> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<HandlerRunResult>((resolve) => {
    const stop = (error: string) => {
      controller.abort();
      resolve({ exitCode: null, stdout: '', stderr: '', error });
    };
    onAbort = () => stop(ABORTED_MESSAGE);
    if (signal.aborted) return stop(ABORTED_MESSAGE);
    signal.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(() => stop(timeoutMessage(handler.timeoutSec)), Math.min(handler.timeoutSec * 1000, MAX_TIMER_MS));
  });
  const ran = (async (): Promise<HandlerRunResult> => {
    try {
      const output = await handler.run!(structuredClone(input), { signal: controller.signal });
      const stdout = output === undefined || output === null ? '' : JSON.stringify(output);
      return { exitCode: 0, stdout: stdout ?? '', stderr: '' };
    } catch (error) {
      return { exitCode: null, stdout: '', stderr: '', error: `function hook failed: ${errorMessage(error)}` };
    }
  })();
  try {
    return await Promise.race([ran, stopped]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
