import type { CellMessage, FlowFunction, PositionalCall, PostFunction } from './bridge';

/** Messages (or characters) after which the cell waits for the runtime to take everything queued. */
export const FLOW_MESSAGES = 512;
export const FLOW_CHARS = 4194304;

/** Sends one message to the runtime; typed per message, positional at run time. */
export type Send = PositionalCall<CellMessage>;

/**
 * The cell's way out, with backpressure (and the journal: each message carries the entries
 * recorded since the previous one, `journal.ts`): messages go out through the ignored `post` callback,
 * which queues them on the runtime's event loop without waiting. After every `FLOW_MESSAGES`
 * messages (or `FLOW_CHARS` characters), the cell calls the synchronous `flow` callback, which
 * blocks the cell's thread until the runtime has run everything queued before it (isolated-vm runs
 * a thread's tasks in order). So a cell that floods the bridge (`for (;;) yield_control()`, timers
 * set and cleared in a loop) never queues more than one window on the runtime, and the runtime's
 * event loop (its timers: the CPU and wall limits, its signals) keeps running.
 */
export function createSend(post: PostFunction, flow: FlowFunction, takeJournal: () => string | undefined = () => undefined): Send {
  const postAny = post as unknown as (kind: string, a?: unknown, b?: unknown, c?: unknown, journal?: string) => void;
  let unsentWindow = 0;
  let unsentChars = 0;
  // Positional parameters, not a rest array: nothing here runs an iterator the cell could replace.
  function send(kind: string, a?: unknown, b?: unknown, c?: unknown): void {
    // The journal entries recorded since the last message leave with this one, ahead of it.
    const journal = takeJournal();
    postAny(kind, a, b, c, journal);
    unsentWindow++;
    if (journal !== undefined) unsentChars += journal.length;
    if (typeof a === 'string') unsentChars += a.length;
    if (typeof b === 'string') unsentChars += b.length;
    if (typeof c === 'string') unsentChars += c.length;
    if (unsentWindow >= FLOW_MESSAGES || unsentChars >= FLOW_CHARS) {
      unsentWindow = 0;
      unsentChars = 0;
      flow();
    }
  }
  return send as Send;
}
