import { randomUUID } from 'node:crypto';
import { SwitchyardError } from '@switchyard/protocol';
import type { StoredPair } from './code-mode-session';

// A session's committed stored values as durable state, for a session store to keep across a
// restart: the format of a Code Mode session state with no cell journals (cells that were running
// are not resumed by this; the durable-cell journal adds them).

const FORMAT = 'switchyard.code-mode-session';
const VERSION = 1;

/** The durable state of a session that holds only stored values: `{ format, version, id, stored, cells: [] }`. */
export interface StoredValuesState {
  readonly format: typeof FORMAT;
  readonly version: number;
  readonly id: string;
  readonly stored: ReadonlyArray<readonly [string, string]>;
  readonly cells: readonly never[];
}

export function storedValuesState(id: string, pairs: readonly StoredPair[]): StoredValuesState {
  return { format: FORMAT, version: VERSION, id, stored: pairs.map(([key, json]) => [key, json] as const), cells: [] };
}

export function newStateId(): string {
  return randomUUID();
}

/** The stored pairs of a state {@link storedValuesState} gave; `INVALID_INPUT` for anything else. */
export function storedPairsOf(state: unknown): { id: string; pairs: StoredPair[] } {
  const value = state as Partial<StoredValuesState> | null;
  if (typeof value !== 'object' || value === null || value.format !== FORMAT || typeof value.version !== 'number' || value.version > VERSION || !Array.isArray(value.stored)) {
    throw new SwitchyardError('INVALID_INPUT', `restore: not a ${FORMAT} state of version ${VERSION} or older`);
  }
  const pairs = value.stored.filter((pair): pair is [string, string] => Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'string');
  if (pairs.length !== value.stored.length) throw new SwitchyardError('INVALID_INPUT', 'restore: a stored value is not a [key, JSON text] pair');
  return { id: typeof value.id === 'string' ? value.id : newStateId(), pairs };
}
