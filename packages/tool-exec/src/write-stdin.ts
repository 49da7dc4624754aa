import { RespondToModelError, type ToolInvocation } from '@switchyard/protocol';
import { emit, waitForProcess } from './call-progress';
import { parseWriteArgs } from './exec-arguments';
import { ExecCommandOutput, chunkId, type ExecResult } from './exec-output';
import { sweepEarlierTurns } from './process-hygiene';
import type { ProcessEntry } from './process-table';
import { OPAQUE_LINE_MESSAGE, typeInto } from './typed-line';
import { ensureOpen, type ToolsetState } from './toolset-state';

/** Writes `chars` to the process of `entry` (a tty's stdin) and follows the line typed so far. */
function writeTo(invocation: ToolInvocation, entry: ProcessEntry, chars: string): void {
  const execProcess = entry.process;
  const typed = typeInto(entry.typed, chars);
  // A line edited with keys the hooks cannot follow is not submitted: the hook saw something else.
  if (execProcess.tty && typed.submitsOpaque) throw new RespondToModelError(OPAQUE_LINE_MESSAGE);
  try {
    execProcess.write(chars);
  } catch (error) {
    throw new RespondToModelError(`write_stdin failed: ${(error as Error).message}`);
  }
  entry.typed = typed.after;
  emit(invocation, 'terminal-interaction', { session_id: entry.id, stdin: chars });
}

/** write_stdin: writes `chars` (an empty write is a poll), waits, answers with the output so far. */
export async function handleWriteStdin(state: ToolsetState, invocation: ToolInvocation): Promise<ExecCommandOutput> {
  const started = Date.now();
  ensureOpen(state);
  const { id, chars, yieldMs, maxOutputTokens } = parseWriteArgs(invocation);
  sweepEarlierTurns(state, invocation.step);
  const entry: ProcessEntry | undefined = state.table.get(id, invocation.step.sessionId);
  if (!entry) throw new RespondToModelError(`write_stdin failed: Unknown process id ${id}`);
  state.table.touch(entry);
  const execProcess = entry.process;
  if (chars !== '') writeTo(invocation, entry, chars);
  entry.polls++;
  try {
    await waitForProcess(execProcess, yieldMs, invocation.signal, started);
  } catch (error) {
    state.table.remove(id);
    execProcess.kill();
    throw error;
  } finally {
    entry.polls--;
  }
  let output: string;
  try {
    output = await execProcess.takeOutput();
  } catch (error) {
    state.table.remove(id); // failed closed: killed, its output withheld
    throw error;
  }
  const result: ExecResult = { chunkId: chunkId(), wallTimeMs: Date.now() - started, output, maxOutputTokens };
  if (execProcess.exited) {
    state.table.remove(id);
    emit(invocation, 'exec-command-end', { command: entry.command, exit_code: execProcess.exitCode as number, session_id: id });
    return new ExecCommandOutput({ ...result, exitCode: execProcess.exitCode, hookCommand: entry.command, hookCallId: entry.callId });
  }
  return new ExecCommandOutput({ ...result, sessionId: id, hookCommand: entry.command });
}
