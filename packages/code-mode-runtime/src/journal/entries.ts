import { SwitchyardError } from '@switchyard/protocol';

/** What the journal says entered the cell, in order (the clock reads apart: they are answered in their own order). */
export type JournalDelivery = { readonly kind: 'resolve'; readonly id: string } | { readonly kind: 'timers'; readonly ids: readonly number[] };

/** A journal's entries, split for a replay: the deliveries in order, and the clock reads as `[ms, count, …]`. */
export interface ParsedEntries {
  readonly deliveries: JournalDelivery[];
  readonly times: number[];
}

const RESOLVE = /^r([1-9]\d{0,15})$/;
const TIMERS = /^t([1-9]\d{0,15}(?:\.[1-9]\d{0,15})*)$/;
const TIME = /^d(-?\d{1,16})(?:\*([1-9]\d{0,15}))?$/;

/** The error of a journal that cannot be read: `INVALID_JOURNAL`, naming the cell and what is wrong. */
export function invalidJournal(cellId: string, problem: string): SwitchyardError {
  return new SwitchyardError('INVALID_JOURNAL', `cannot resume cell ${cellId}: its journal is invalid (${problem})`);
}

/** Splits `CellJournalRecord.entries`; throws `INVALID_JOURNAL` for a malformed entry. */
export function parseEntries(cellId: string, text: string): ParsedEntries {
  const deliveries: JournalDelivery[] = [];
  const times: number[] = [];
  if (text === '') return { deliveries, times };
  const tokens = text.split(',');
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    let match: RegExpExecArray | null;
    if ((match = RESOLVE.exec(token))) deliveries.push({ kind: 'resolve', id: `tool-${match[1]}` });
    else if ((match = TIMERS.exec(token))) deliveries.push({ kind: 'timers', ids: match[1]!.split('.').map(Number) });
    else if ((match = TIME.exec(token))) times.push(Number(match[1]), match[2] === undefined ? 1 : Number(match[2]));
    else throw invalidJournal(cellId, `entry ${index + 1} is ${JSON.stringify(token.slice(0, 40))}`);
  }
  return { deliveries, times };
}
