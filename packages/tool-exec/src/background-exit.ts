import { formatToolError, type BackgroundDelivery, type ToolOutput } from '@switchyard/protocol';
import { FunctionToolOutput } from '@switchyard/kit';
import { ExecCommandOutput, chunkId } from './exec-output';
import type { ProcessEntry, ProcessTable } from './process-table';

/**
 * When a process that outlived its exec_command call exits while no write_stdin waits on it, its
 * exit and remaining output go to the session's background inbox as another
 * `function_call_output` of that exec_command call, and the process leaves the table (a later
 * write_stdin finds no such process, as after any reported exit). A process killed with its turn,
 * its session or by eviction has already left the table: nothing is delivered for it.
 */
export function deliverOnExit(table: ProcessTable, entry: ProcessEntry, background: BackgroundDelivery, call: { started: number; maxOutputTokens?: number }): void {
  const callId = entry.callId as string;
  void entry.process.finished.then(async () => {
    if (background.signal.aborted || entry.polls > 0 || table.get(entry.id, entry.sessionId) !== entry) return;
    table.remove(entry.id);
    const exitCode = entry.process.exitCode;
    let output: ToolOutput;
    try {
      output = new ExecCommandOutput({ chunkId: chunkId(), wallTimeMs: Date.now() - call.started, output: await entry.process.takeOutput(), exitCode, maxOutputTokens: call.maxOutputTokens });
    } catch (error) {
      // the check at its exit failed closed: the model reads the failure, not the output
      output = new FunctionToolOutput(formatToolError(error), false);
    }
    const item = output.toResponseItem(callId, { kind: 'function', arguments: '{}' });
    background.complete({ callId, processId: entry.id, status: exitCode === 0 && output.success !== false ? 'completed' : 'failed', item });
  });
}
