import { SwitchyardError, type JsonValue, type ResponseItem, type RunningWork } from '@switchyard/protocol';
import { storeError } from '@switchyard/kit/internal';

// What a session keeps in its store beside the history: one versioned JSON document, and the
// portable export (`session.export()` / `createSession({ restore })`) that carries all of it.

/** The `format` of the state document a session commits. */
export const SESSION_STATE_FORMAT = 'switchyard.session-state';
/** The `format` of `session.export()`. */
export const SESSION_EXPORT_FORMAT = 'switchyard.session';
/** The version of both documents this library writes; a newer one is refused (`STORE_VERSION`). */
export const SESSION_STATE_VERSION = 1;

/** A cell open at the last commit, with the `exec` call that created it. */
export interface OpenCell {
  readonly cellId: string;
  readonly execCallId?: string;
}

/** The session's state document (besides history and journal). JSON. */
export interface SessionStateDocument {
  readonly format: typeof SESSION_STATE_FORMAT;
  readonly version: number;
  readonly sessionId: string;
  /** The last `usage.totalTokens` the model reported (get_context_remaining reads it). */
  readonly usedTokens: number;
  /** Output items waiting for the model's next request (background completions, lost-work reports), in order. */
  readonly pending: readonly ResponseItem[];
  /** Work the tools kept running past their calls at the last commit (exec_command processes). */
  readonly work: readonly RunningWork[];
  /** Cells open at the last commit. */
  readonly cells: readonly OpenCell[];
  /** Code Mode's durable state (stored values, each open cell's journal) as Code Mode exported it; opaque here. */
  readonly codeMode?: JsonValue;
}

/**
 * `session.export()`: the whole durable state of a session in one JSON document, for hosts that
 * keep sessions in their own database; `createSession({ restore })` takes it back.
 */
export interface SessionExport {
  readonly format: typeof SESSION_EXPORT_FORMAT;
  readonly version: number;
  readonly sessionId: string;
  readonly history: readonly ResponseItem[];
  readonly state: SessionStateDocument;
  /** Code Mode journal entries reported since `state.codeMode` was taken, in order. */
  readonly journal: readonly JsonValue[];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks a state document read back from a store or an export: `STORE_VERSION` for a newer
 * version, `code` (`STORE_CORRUPT` from a store, `CONFIG` for a host's `restore`) for anything else
 * that is not one, naming the session.
 */
export function checkStateDocument(value: unknown, sessionId: string, code: 'STORE_CORRUPT' | 'CONFIG'): SessionStateDocument {
  const fail = (problem: string) => storeError(code, sessionId, `its state document ${problem}`);
  if (!isObject(value) || value.format !== SESSION_STATE_FORMAT) throw fail(`is not a ${SESSION_STATE_FORMAT} document`);
  if (typeof value.version !== 'number' || !Number.isInteger(value.version) || value.version < 1) throw fail('has no valid version');
  if (value.version > SESSION_STATE_VERSION) {
    throw storeError('STORE_VERSION', sessionId, `its state document has version ${value.version}, newer than this library reads (${SESSION_STATE_VERSION}): upgrade @switchyard/session`);
  }
  if (typeof value.usedTokens !== 'number') throw fail('has no usedTokens');
  if (!Array.isArray(value.pending) || !value.pending.every((item) => isObject(item) && typeof item.type === 'string')) throw fail('has malformed pending items');
  if (!Array.isArray(value.work) || !value.work.every((work) => isObject(work) && typeof work.callId === 'string' && typeof work.command === 'string')) throw fail('has malformed running work');
  if (!Array.isArray(value.cells) || !value.cells.every((cell) => isObject(cell) && typeof cell.cellId === 'string')) throw fail('has malformed open cells');
  return value as unknown as SessionStateDocument;
}

/** Checks `createSession({ restore })`: a `CONFIG` error naming the option, `STORE_VERSION` for a newer export. */
export function checkExport(value: unknown): SessionExport {
  if (!isObject(value) || value.format !== SESSION_EXPORT_FORMAT) throw new SwitchyardError('CONFIG', `createSession: option \`restore\` must be what session.export() returned (format "${SESSION_EXPORT_FORMAT}")`);
  const sessionId = typeof value.sessionId === 'string' ? value.sessionId : '(unnamed)';
  if (typeof value.version !== 'number' || value.version > SESSION_STATE_VERSION) {
    throw storeError('STORE_VERSION', sessionId, `option \`restore\` has export version ${String(value.version)}, newer than this library reads (${SESSION_STATE_VERSION}): upgrade @switchyard/session`);
  }
  if (!Array.isArray(value.history)) throw new SwitchyardError('CONFIG', 'createSession: option `restore.history` must be a list of items');
  if (!Array.isArray(value.journal)) throw new SwitchyardError('CONFIG', 'createSession: option `restore.journal` must be a list');
  checkStateDocument(value.state, sessionId, 'CONFIG');
  return value as unknown as SessionExport;
}

/**
 * What the model reads, once, in the next request after a restart, for a process that was running
 * when its host stopped: another `function_call_output` for the `exec_command` call that started it.
 */
export function lostWorkItem(work: RunningWork): ResponseItem {
  const process = work.processId === undefined ? 'A process' : `Process ${work.processId}`;
  return {
    type: 'function_call_output',
    call_id: work.callId,
    output:
      `${process} was lost: the host restarted while it was running \`${work.command}\`. It is not running any more, ` +
      'its output since the last read is gone, and write_stdin cannot reach it; run the command again if it is still needed.',
  };
}

/**
 * What the model reads for a cell that was open when its host stopped and could not be resumed:
 * another `custom_tool_call_output` for its `exec` call (the shape a background completion has).
 */
export function lostCellItem(cell: OpenCell, reason: string): ResponseItem | undefined {
  if (cell.execCallId === undefined) return undefined;
  return {
    type: 'custom_tool_call_output',
    call_id: cell.execCallId,
    output: `Script failed\nexec cell ${cell.cellId} was lost: its host restarted while it ran and it could not be resumed (${reason}); its nested calls that completed are not run again by this message. Run what is still needed in a new cell.`,
  };
}

/** The output closing an `exec` call left open by the restart, whose cell resumed: the cell goes on, its end follows. */
export function resumedExecOutput(cell: OpenCell): ResponseItem {
  return {
    type: 'custom_tool_call_output',
    call_id: cell.execCallId!,
    output: `Script running with cell ID ${cell.cellId}\n(its host restarted; the cell resumed from its journal, and its end follows when it completes)`,
  };
}
