/**
 * The bridge between a cell's isolate and its runtime: every message either side sends, described
 * once as tuples `[kind, …arguments]`. The prelude (inside the isolate) and `cell.ts` (the runtime)
 * both type their ends with these, so a message added or changed here is checked on both sides.
 *
 * Messages cross as positional arguments (`post(kind, a, b, c)`), never as one array: spreading an
 * array inside the isolate would run its iterator, which the cell's code can replace. Every
 * argument is a primitive, except the flat string array of `calls`. The runtime re-validates every
 * message it receives (`decodeCellMessage` in `cell.ts`): the isolate is untrusted.
 *
 * Every message out also carries, as its fifth positional argument (after the kind and three
 * argument slots), the journal entries recorded since the previous message (`string`, or
 * `undefined` for none; see `journal.ts`): they reach the runtime before the message itself.
 */

import type { PreludeLimitName } from '../cell-limits';

/** The image detail levels a cell's `image()` accepts. */
export type ImageDetail = 'auto' | 'low' | 'high' | 'original';

/** Isolate → runtime, through the ignored `post` callback. */
export type CellMessage =
  /** one `text()` / `console.*` item */
  | readonly [kind: 'text', text: string]
  /** one `image()` item: a `data:` URL and its detail */
  | readonly [kind: 'image', url: string, detail: ImageDetail]
  /** a `notify()` message for the host */
  | readonly [kind: 'notify', text: string]
  /** `yield_control()` */
  | readonly [kind: 'yield']
  /** the nested calls started in one synchronous run: `[id, tool, argumentsJson, id, tool, argumentsJson, …]` */
  | readonly [kind: 'calls', batch: string[]]
  /** a `setTimeout`: its id and its delay in ms (already clamped) */
  | readonly [kind: 'set-timer', id: number, delayMs: number]
  /** a `clearTimeout` of a live timer */
  | readonly [kind: 'clear-timer', id: number]
  /** one stored write, sent at completion: its key and its value's JSON */
  | readonly [kind: 'write', key: string, json: string]
  /** completion: failed (1) or not (0), the error text (`''` when none), the number of `write`s before it (-1: could not report) */
  | readonly [kind: 'done', failed: 0 | 1, error: string, writes: number]
  /** the answer to a `sync`: every message the cell sent before it has been sent (a replay's barrier) */
  | readonly [kind: 'synced', sequence: number];

/** Runtime → isolate, through the `control` function the prelude returns. */
export type ControlMessage =
  /**
   * a nested call settled: ok (1) with the result's JSON (`undefined` for no result), or failed (0)
   * with its text; `replayed` (1): delivered from the cell's journal in a replay (not journaled again)
   */
  | readonly [kind: 'resolve', id: string, ok: 1, json: string | undefined, replayed: 0 | 1]
  | readonly [kind: 'resolve', id: string, ok: 0, error: string, replayed: 0 | 1]
  /** timers due in one host tick, as the JSON of their ids in order; `replayed` as for `resolve` */
  | readonly [kind: 'timers', idsJson: string, replayed: 0 | 1]
  /** asks for a `synced` answer once everything before has run (a replay's barrier) */
  | readonly [kind: 'sync', sequence: number];

type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never;

/** A function taking one message of `M` as positional arguments: one overload per message. */
export type PositionalCall<M extends readonly unknown[]> = UnionToIntersection<M extends unknown ? (...message: M) => void : never>;

/** `$0`: an `ivm.Callback({ ignored: true })`, queues a message on the runtime's event loop without waiting. */
export type PostFunction = PositionalCall<CellMessage>;
/** `$3`: a synchronous `ivm.Callback`; returns once the runtime has run every message queued before it (backpressure). */
export type FlowFunction = () => void;
/** What the prelude returns: the runtime enters the isolate through it. */
export type ControlFunction = PositionalCall<ControlMessage>;

/** A stored value as the cell receives it: its key and its JSON (one string per value). */
export type StoredPair = readonly [key: string, json: string];

/** A tool as the cell sees it (`tools.<name>`, an `ALL_TOOLS` entry). */
export interface PreludeTool {
  name: string;
  description: string;
  kind: 'function' | 'freeform';
  /** The TypeScript declaration shown in `ALL_TOOLS` */
  declaration: string;
}

/**
 * The per-cell limits the prelude enforces itself (each also has a guard in the runtime): those
 * `CELL_LIMITS` marks `prelude` (`heapMb` for the value size error's text), and `maxValueChars`,
 * the characters per value crossing the bridge (`maxValueChars(heapMb)`).
 */
export type PreludeLimits = { readonly [K in PreludeLimitName]: number } & { readonly maxValueChars: number };

/** `$1` (as JSON): the cell's tools, whether `store`/`load` exist, its limits, its seed and what a replay answers. */
export interface PreludeConfig {
  tools: PreludeTool[];
  storeEnabled: boolean;
  limits: PreludeLimits;
  /** The seed of `Math.random` (32 hex digits). */
  seed: string;
  /** A replay: the clock reads its journal recorded, as `[ms, count, ms, count, …]`, answered again in order. */
  replayTimes?: number[];
}
