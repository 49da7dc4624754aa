import { SwitchyardError, type JsonValue, type SwitchyardEvent, type ToolInvocation } from '@switchyard/protocol';
import { abortedMessage } from '@switchyard/kit/internal';
import type { ExecProcess } from './exec-process';

// What a call of either tool does while its process runs: tell the host, wait, answer an abort.

/** The ABORTED error of a call that started at `started` (epoch ms), in the shell's words. */
export function abortError(started: number): SwitchyardError {
  return new SwitchyardError('ABORTED', abortedMessage(Date.now() - started, { style: 'shell' }));
}

/** Waits until the process finished, `ms` passed, or the call was aborted (then throws ABORTED). */
export async function waitForProcess(execProcess: ExecProcess, ms: number, signal: AbortSignal, started: number): Promise<void> {
  if (signal.aborted) throw abortError(started);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<'aborted'>((resolveAbort) => {
    onAbort = () => resolveAbort('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  const deadline = new Promise<'deadline'>((resolveDeadline) => (timer = setTimeout(() => resolveDeadline('deadline'), ms)));
  try {
    const outcome = await Promise.race([execProcess.finished.then(() => 'finished' as const), deadline, aborted]);
    if (outcome === 'aborted') throw abortError(started);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** Emits a `tool-notification` of the call (`exec-command-begin`, `terminal-interaction`, …). */
export function emit(invocation: ToolInvocation, name: string, data: JsonValue): void {
  try {
    invocation.emit?.({ type: 'tool-notification', callId: invocation.callId, name, data } satisfies SwitchyardEvent);
  } catch {
    // a broken listener never breaks a call
  }
}
