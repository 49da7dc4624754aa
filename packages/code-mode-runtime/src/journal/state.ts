import { createHash, randomBytes } from 'node:crypto';
import {
  CODE_MODE_STATE_FORMAT,
  CODE_MODE_STATE_VERSION,
  SwitchyardError,
  type CellJournalRecord,
  type CellToolDescriptor,
  type CodeModeSessionState,
  type JournalCall,
  type JournalCallResult,
  type JournalObserved,
} from '@switchyard/protocol';

/**
 * The durable state of a Code Mode session as data (`CodeModeSessionState`): sealing a cell
 * journal, and the checks a restore runs on what a store gives back. Every check fails with
 * `INVALID_JOURNAL` and a sentence naming the problem: the whole state when it is not a state
 * this package reads (another format, a newer version), one cell when its journal is corrupted,
 * belongs to another session, or is of a newer version.
 */

/** A fresh session identity (24 hex digits). */
export function newSessionId(): string {
  return randomBytes(12).toString('hex');
}

/** A record without its seal. */
export type UnsealedRecord = Omit<CellJournalRecord, 'check'>;

const toolFields = (tool: CellToolDescriptor) => [tool.name, tool.description, tool.kind, tool.declaration ?? null, tool.idempotent === true];
const callFields = (call: JournalCall) => [call.id, call.tool, call.hash, call.result === undefined ? null : call.result.ok ? [1, call.result.json ?? null] : [0, call.result.error]];
const observedFields = (observed: JournalObserved) => [observed.items, observed.itemsHash, observed.notifies, observed.notifiesHash];

/**
 * The seal of a record: the SHA-256 of its fields in a fixed order, as arrays (so a store that
 * reorders object keys, as JSONB does, keeps the seal), first 32 hex digits.
 */
export function recordCheck(record: UnsealedRecord): string {
  const fields = [
    record.version,
    record.session,
    record.cellId,
    record.source,
    record.tools.map(toolFields),
    record.typescript ?? null,
    record.stored,
    record.seed,
    record.entries,
    record.calls.map(callFields),
    observedFields(record.observed),
    record.committed,
    record.unresumable ?? null,
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex').slice(0, 32);
}

export function sealRecord(record: UnsealedRecord): CellJournalRecord {
  return { ...record, check: recordCheck(record) };
}

const invalid = (message: string) => new SwitchyardError('INVALID_JOURNAL', message);

/** Throws `INVALID_JOURNAL` unless `state` is a state this package reads (the cells are checked one by one later). */
export function checkState(state: unknown): CodeModeSessionState {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) throw invalid('cannot restore the session: its state is not an object');
  const candidate = state as Partial<CodeModeSessionState>;
  if (candidate.format !== CODE_MODE_STATE_FORMAT) {
    throw invalid(`cannot restore the session: its state's format is ${JSON.stringify(candidate.format)}, not "${CODE_MODE_STATE_FORMAT}"`);
  }
  if (typeof candidate.version !== 'number' || !Number.isInteger(candidate.version) || candidate.version < 1) {
    throw invalid(`cannot restore the session: its state's version is ${JSON.stringify(candidate.version)}`);
  }
  if (candidate.version > CODE_MODE_STATE_VERSION) {
    throw invalid(`cannot restore the session: its state is of version ${candidate.version}, newer than this runtime reads (${CODE_MODE_STATE_VERSION})`);
  }
  if (typeof candidate.id !== 'string' || candidate.id === '') throw invalid('cannot restore the session: its state has no id');
  if (!Array.isArray(candidate.stored) || !candidate.stored.every(isStoredPair)) throw invalid('cannot restore the session: its stored values are not [key, JSON text] pairs');
  if (!Array.isArray(candidate.cells)) throw invalid('cannot restore the session: its cells are not a list');
  return candidate as CodeModeSessionState;
}

export const isStoredPair = (pair: unknown): pair is [string, string] => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string';
const isString = (value: unknown): value is string => typeof value === 'string';
const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 0;

function isTool(tool: unknown): tool is CellToolDescriptor {
  const t = tool as CellToolDescriptor | null;
  return typeof t === 'object' && t !== null && isString(t.name) && isString(t.description) && (t.kind === 'function' || t.kind === 'freeform');
}

export function isJournalCall(call: unknown): call is JournalCall {
  const c = call as JournalCall | null;
  if (typeof c !== 'object' || c === null || !isString(c.id) || !/^tool-[1-9]\d*$/.test(c.id) || !isString(c.tool) || !isString(c.hash)) return false;
  return c.result === undefined || isCallResult(c.result);
}

export function isCallResult(value: unknown): value is JournalCallResult {
  const result = value as Record<string, unknown> | null;
  return typeof result === 'object' && result !== null && (result.ok === true ? result.json === undefined || isString(result.json) : result.ok === false && isString(result.error));
}

export function isObserved(observed: unknown): observed is JournalObserved {
  const o = observed as JournalObserved | null;
  return typeof o === 'object' && o !== null && isCount(o.items) && isString(o.itemsHash) && isCount(o.notifies) && isString(o.notifiesHash);
}

/** Which field of a record is malformed, or undefined. */
function malformedField(r: Partial<CellJournalRecord>): string | undefined {
  if (!isString(r.source)) return 'source';
  if (!Array.isArray(r.tools) || !r.tools.every(isTool)) return 'tools';
  if (r.typescript !== undefined && typeof r.typescript !== 'boolean') return 'typescript';
  if (!Array.isArray(r.stored) || !r.stored.every(isStoredPair)) return 'stored';
  if (!isString(r.seed) || !/^[0-9a-f]{32}$/.test(r.seed)) return 'seed';
  if (!isString(r.entries)) return 'entries';
  if (!Array.isArray(r.calls) || !r.calls.every(isJournalCall)) return 'calls';
  if (!isObserved(r.observed)) return 'observed';
  if (typeof r.committed !== 'boolean') return 'committed';
  if (r.unresumable !== undefined && !isString(r.unresumable)) return 'unresumable';
  if (!isString(r.check)) return 'check';
  return undefined;
}

/**
 * The record of cell `index` of a state whose id is `sessionId`, checked: its cell id (or, when it
 * has none, `cell #index`) and the record, or the `INVALID_JOURNAL` error saying why not.
 */
export function checkRecord(record: unknown, sessionId: string, index: number): { cellId: string; record?: CellJournalRecord; error?: SwitchyardError } {
  const r = (typeof record === 'object' && record !== null ? record : {}) as Partial<CellJournalRecord>;
  const cellId = isString(r.cellId) && /^[0-9A-Za-z_-]{1,64}$/.test(r.cellId) ? r.cellId : undefined;
  if (cellId === undefined) return { cellId: `#${index + 1}`, error: invalid(`cannot resume cell #${index + 1} of the state: its journal names no valid cell id`) };
  const fail = (problem: string) => ({ cellId, error: invalid(`cannot resume cell ${cellId}: its journal ${problem}`) });
  if (typeof r.version !== 'number' || !Number.isInteger(r.version) || r.version < 1) return fail('has no valid version');
  if (r.version > CODE_MODE_STATE_VERSION) return fail(`is of version ${r.version}, newer than this runtime reads (${CODE_MODE_STATE_VERSION})`);
  if (r.session !== sessionId) return fail(`belongs to another session (${JSON.stringify(String(r.session).slice(0, 40))}, not ${sessionId})`);
  const field = malformedField(r);
  if (field !== undefined) return fail(`is corrupted (its field \`${field}\` is malformed)`);
  if (recordCheck(r as CellJournalRecord) !== r.check) return fail('is corrupted (its fields do not match its check)');
  return { cellId, record: r as CellJournalRecord };
}
