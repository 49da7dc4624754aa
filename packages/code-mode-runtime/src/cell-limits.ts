import { messageTable, optionRules as rule, type MessageField as Field, type OptionRule } from '@switchyard/kit/internal';
import { maxValueChars } from './value-limit';

const { integer, optional } = messageTable;

/**
 * The per-cell limits, in one table: each limit is defined here once, and everything else derives
 * from its entry — the option types (`CodeModeRuntimeOptions`, `RemoteRuntimeOptions`, a runtime
 * host's caps), the option rules (a `CONFIG` error naming the option), the default, the wire kind
 * in `open-session` (`EngineSessionOptions`), the limits the prelude enforces inside the isolate,
 * and the caps a runtime host applies to what an agent host asks for. Adding a limit here is the
 * only edit they need; `cell-limits.test.ts` and the README's generated table check it.
 */
interface LimitEntry {
  /** The smallest value the option takes. */
  readonly min: number;
  /** The default: a number, one derived from the cell's `heapMb`, or undefined for none. */
  readonly fallback: number | ((heapMb: number) => number) | undefined;
  /** The default as the README says it. */
  readonly defaultText: string;
  /** `false` is "no limit" (the option's type is `number | false`; absent on the wire). */
  readonly none?: true;
  /**
   * Who holds it: `runtime` (the engine and its isolate; a runtime host caps it) or `agent` (the
   * agent host only; a runtime ignores it and a runtime host drops it).
   */
  readonly heldBy: 'runtime' | 'agent';
  /** An optional field of `EngineSessionOptions` (absent: a runtime fills the default, or none). */
  readonly optionalOnWire?: true;
  /** The prelude enforces it inside the isolate (it is a field of `PreludeLimits`). */
  readonly prelude?: true;
  /** What happens when a cell reaches it (the README's text). */
  readonly whenHit: string;
}

const MiB = 1024 * 1024;

export const CELL_LIMITS = {
  /** V8 heap per cell in MB (isolated-vm `memoryLimit`). */
  heapMb: {
    min: 8,
    fallback: 128,
    defaultText: '128',
    heldBy: 'runtime',
    prelude: true,
    whenHit: 'V8 heap per cell; "exec runtime ended unexpectedly: the cell exceeded its heap limit of N MB"',
  },
  /** CPU time per cell in ms (polled every 10 ms); `false` for none. */
  cpuTimeMs: {
    min: 1,
    fallback: 60_000,
    defaultText: '60,000 (`DEFAULT_CPU_TIME_MS`; `false`: none)',
    none: true,
    heldBy: 'runtime',
    optionalOnWire: true,
    whenHit: '"exec cell exceeded its CPU time limit of N ms" (polled every 10 ms; also bounds TypeScript stripping): a `while (true) {}` ends there',
  },
  /** Wall time per cell in ms, from its creation; `false` (the default) for none: cells run until terminated. */
  wallTimeMs: {
    min: 1,
    fallback: undefined,
    defaultText: 'none',
    none: true,
    heldBy: 'runtime',
    optionalOnWire: true,
    whenHit: '"exec cell exceeded its wall time limit of N ms"',
  },
  /** Cells a session holds at once (running, terminating, or completed with results not yet observed); more are refused with LIMIT_EXCEEDED. */
  maxCells: {
    min: 1,
    fallback: 32,
    defaultText: '32',
    heldBy: 'runtime',
    whenHit: 'per session; `createCell` rejects with `LIMIT_EXCEEDED`',
  },
  /** Nested tool calls in flight per cell; more reject inside the cell. */
  maxInFlightCalls: {
    min: 1,
    fallback: 256,
    defaultText: '256',
    heldBy: 'runtime',
    prelude: true,
    whenHit: 'per cell; the extra call rejects inside the cell',
  },
  /** Characters of nested-call argument JSON in flight per cell; a call that would go over it rejects inside the cell. */
  maxInFlightArgumentChars: {
    min: 1,
    // Twice the value size limit: two arguments of the largest size may be in flight at once.
    fallback: (heapMb) => 2 * maxValueChars(heapMb),
    defaultText: 'heapMb / 4 Mi (33,554,432)',
    heldBy: 'runtime',
    prelude: true,
    whenHit: 'characters of argument JSON in flight per cell; the call that would go over rejects inside the cell',
  },
  /** UTF-8 bytes of output (text, image URLs, notify) per cell; more throw inside the cell. */
  maxOutputBytes: {
    min: 1,
    fallback: 16 * MiB,
    defaultText: '16 MiB',
    heldBy: 'runtime',
    prelude: true,
    whenHit: 'UTF-8 of text (`console.*` included), image URLs and notify per cell; the helper throws',
  },
  /** `text` / `image` / `notify` calls per cell, empty ones included; more throw inside the cell. */
  maxOutputItems: {
    min: 1,
    fallback: 100_000,
    defaultText: '100,000',
    heldBy: 'runtime',
    prelude: true,
    whenHit: '`text` / `console.*` / `image` / `notify` calls per cell, empty ones included; the helper throws',
  },
  /** Pending timers (`setTimeout`) per cell; more throw inside the cell. */
  maxTimers: {
    min: 1,
    fallback: 100_000,
    defaultText: '100,000',
    heldBy: 'runtime',
    prelude: true,
    whenHit: 'pending `setTimeout`s per cell; `setTimeout` throws',
  },
  /**
   * UTF-8 bytes of a session's stored values (keys and JSON), checked by the agent host when a cell
   * commits: a commit over it fails that cell and stores none of its writes. Also checked inside the
   * isolate against the cell's own writes, so writes that could never commit never leave it.
   */
  maxStoredBytes: {
    min: 1,
    // A quarter of the heap: a new cell receives the whole snapshot as one string per value on its
    // heap and `load` parses one beside it; a quarter leaves room for that, the cell's own work and
    // two-byte strings. 3 × 3 values of 4,194,288 characters (37.7 MB) in a 32 MB cell made every
    // later cell of the session fail at start; the budget (8 MiB there) refuses that commit.
    fallback: (heapMb) => Math.floor((heapMb * MiB) / 4),
    defaultText: 'heapMb / 4 MiB (33,554,432)',
    heldBy: 'runtime',
    optionalOnWire: true,
    prelude: true,
    whenHit:
      'UTF-8 bytes of a session\'s stored values (keys and JSON), checked twice. Inside the isolate, against the cell\'s own writes (the last write of each key): the `store()` that passes it throws "exec stored values budget exceeded: this cell\'s writes passed B bytes (maxStoredBytes); none of its writes were stored, earlier values are unchanged", later `store()` calls throw it again, and the cell fails with it even when it caught the throw (after its own error, if it failed too); none of its writes leave the isolate. By the agent host at commit, against the session\'s values: "exec stored values budget exceeded: this cell\'s writes would make the session\'s stored values N bytes, over the budget of B bytes (maxStoredBytes); none of its writes were stored, earlier values are unchanged (load and overwrite them to make room)" fails that cell',
  },
  /** Keys of a session's stored values (checked by the agent host like `maxStoredBytes`). */
  maxStoredKeys: {
    min: 1,
    fallback: 10_000,
    defaultText: '10,000',
    heldBy: 'agent',
    optionalOnWire: true,
    whenHit: 'keys of a session\'s stored values, checked the same way',
  },
  /**
   * UTF-8 bytes of one cell's journal, kept by the agent host (the source, the entries, each nested
   * call's record and result): past it the cell runs on but cannot be resumed after a crash or a
   * restart (its failure then says so). `0`: no journals at all.
   */
  maxJournalBytes: {
    min: 0,
    // An eighth of the heap: a resume delivers every journaled result into a fresh isolate again and
    // a store writes the journal with the session, so both grow with it; an eighth is the value size
    // limit of one value, and it keeps the resume message well inside the default frame (64 MiB).
    fallback: (heapMb) => Math.floor((heapMb * MiB) / 8),
    defaultText: 'heapMb / 8 MiB (16,777,216)',
    heldBy: 'agent',
    optionalOnWire: true,
    whenHit:
      'UTF-8 bytes of one cell\'s journal kept by the agent host; past it the cell runs on but is not resumed after a crash or a restart: "exec runtime ended unexpectedly: <cause>; the cell could not be resumed: its journal passed N bytes (maxJournalBytes)"; `0`: no journals',
  },
  /**
   * Bytes of nested-call results on their way to a runtime (sent, not yet taken by it); a result
   * that would pass it fails its call inside the cell.
   */
  maxInFlightResultBytes: {
    min: 1,
    // Four values of the largest size, as UTF-8 of ASCII JSON: room for parallel results, never gigabytes.
    fallback: (heapMb) => 4 * maxValueChars(heapMb),
    defaultText: 'heapMb / 2 MiB (67,108,864)',
    heldBy: 'agent',
    optionalOnWire: true,
    whenHit:
      'bytes of nested-call results sent to a runtime and not yet taken by it; the result that would pass it fails its call inside the cell ("tool result could not be sent to the cell: … (maxInFlightResultBytes)")',
  },
} as const satisfies Readonly<Record<string, LimitEntry>>;

type Table = typeof CELL_LIMITS;

/** The name of a per-cell limit. */
export type CellLimitName = keyof Table;

/** The limits a runtime holds (a runtime host caps them). */
export type RuntimeHeldLimit = { [K in CellLimitName]: Table[K]['heldBy'] extends 'runtime' ? K : never }[CellLimitName];

/** The limits the prelude enforces inside the isolate. */
export type PreludeLimitName = { [K in CellLimitName]: Table[K] extends { prelude: true } ? K : never }[CellLimitName];

/** The per-cell limits as options: each optional; `false` is "no limit" where the limit allows none. */
export type CellLimitOptions = { [K in CellLimitName]?: Table[K] extends { none: true } ? number | false : number };

/** A runtime host's caps: the most it grants of each limit a runtime holds, whatever an agent host asks for. */
export type CellLimitCaps = { [K in RuntimeHeldLimit]?: number };

const entries = Object.entries(CELL_LIMITS) as Array<[CellLimitName, LimitEntry]>;
const entryOf = (name: CellLimitName): LimitEntry => CELL_LIMITS[name];

/** Every limit's name, in the table's order. */
export const CELL_LIMIT_NAMES: readonly CellLimitName[] = entries.map(([name]) => name);

/** The limits a runtime holds, in the table's order. */
export const RUNTIME_HELD_LIMITS = entries.filter(([, entry]) => entry.heldBy === 'runtime').map(([name]) => name) as RuntimeHeldLimit[];

/** The limits the prelude enforces, in the table's order. */
export const PRELUDE_LIMITS = entries.filter(([, entry]) => entry.prelude).map(([name]) => name) as PreludeLimitName[];

/** The limits that have a default (a number, or one derived from the cell's heap). */
export type DefaultedLimit = { [K in CellLimitName]: Table[K]['fallback'] extends undefined ? never : K }[CellLimitName];

/** The default heap of a cell in MB (`heapMb`'s default). */
const DEFAULT_HEAP_MB: number = CELL_LIMITS.heapMb.fallback;

/** The default of `name` for a cell of `heapMb` (undefined: none). */
export function limitDefault(name: DefaultedLimit, heapMb: number): number;
export function limitDefault(name: CellLimitName, heapMb: number): number | undefined;
export function limitDefault(name: CellLimitName, heapMb: number): number | undefined {
  const fallback = entryOf(name).fallback;
  return typeof fallback === 'function' ? fallback(heapMb) : fallback;
}

/** The value of `name` in a session's limits (`engine`): the value on the wire, or the table's default for its heap. */
export function limitOf<K extends DefaultedLimit>(engine: { readonly heapMb: number } & { readonly [P in K]?: number }, name: K): number {
  return engine[name] ?? limitDefault(name, engine.heapMb);
}

/** Whether `name` takes `false` (no limit). */
function limitAllowsNone(name: CellLimitName): boolean {
  return entryOf(name).none === true;
}

/** The option rule of one limit: a number ≥ its minimum (or `false` where none is allowed). */
function limitRule(entry: LimitEntry): OptionRule {
  const atLeast = rule.number({ min: entry.min });
  if (!entry.none) return atLeast;
  return (value, path) => (value === false ? undefined : atLeast(value, path)?.replace(/^must be a number ≥ (\d+)/, 'must be a number ≥ $1 or false'));
}

/** The option rules of every limit (a `CONFIG` error names the option). */
export const CELL_LIMIT_RULES = Object.fromEntries(entries.map(([name, entry]) => [name, limitRule(entry)])) as { [K in CellLimitName]: OptionRule };

type WireShape = { [K in CellLimitName]: Table[K] extends { optionalOnWire: true } ? Field<number> & { optional: true } : Field<number> };

/** The wire kinds of the limits in `EngineSessionOptions` (an optional field where the table says so). */
export const CELL_LIMIT_WIRE_SHAPE = Object.fromEntries(entries.map(([name, entry]) => [name, entry.optionalOnWire ? optional(integer) : integer])) as WireShape;

/** The limits a runtime ignores (the agent host's own), named for the wire kind's documentation. */
export const AGENT_HELD_LIMITS = CELL_LIMIT_NAMES.filter((name) => entryOf(name).heldBy === 'agent');

/**
 * Every limit filled in: an option given is rounded down, `false` is none (undefined), an absent
 * one gets its default for the cell's heap. The options were checked by the rules before.
 */
export function fillCellLimits(options: CellLimitOptions): { [K in CellLimitName]: Table[K] extends { none: true } ? number | undefined : number } {
  const heapMb = Math.floor(options.heapMb ?? DEFAULT_HEAP_MB);
  const filled: Record<string, number | undefined> = {};
  for (const [name] of entries) {
    const given = options[name];
    filled[name] = given === false ? undefined : given === undefined ? limitDefault(name, heapMb) : Math.floor(given);
  }
  return filled as never;
}

/** A runtime host's caps, checked and filled in (a limit without a cap: undefined; the heap always has one). */
export type FilledCellLimitCaps = Record<RuntimeHeldLimit, number | undefined> & { heapMb: number };

/**
 * Checks one cap given to a runtime host: `value` as a whole number, or throws `CONFIG` naming the
 * option when it is not a number ≥ `min` (the limit's minimum). The host passes its own check.
 */
export type CellLimitCapCheck = (value: unknown, name: RuntimeHeldLimit, min: number) => number;

/**
 * Checks a runtime host's caps with `check` and fills them in: a cap not given is the limit's
 * default for a cell of the capped heap (a limit whose default is none stays uncapped).
 */
function fillCellLimitCaps(caps: CellLimitCaps, check: CellLimitCapCheck): FilledCellLimitCaps {
  const given = (name: RuntimeHeldLimit): number | undefined => (caps[name] === undefined ? undefined : check(caps[name], name, entryOf(name).min));
  const heapMb = given('heapMb') ?? DEFAULT_HEAP_MB;
  const filled: FilledCellLimitCaps = { heapMb } as FilledCellLimitCaps;
  for (const name of RUNTIME_HELD_LIMITS) {
    if (name !== 'heapMb') filled[name] = given(name) ?? limitDefault(name, heapMb);
  }
  return filled;
}

/**
 * The limits a session runs with on a runtime host: each limit a runtime holds as the agent host
 * asked, capped by the host's own maximum. A limit asked as none, or not asked, gets the cap; an
 * absent optional one gets its default for the capped heap first. The agent host's own limits are
 * dropped (a runtime ignores them).
 */
function capCellLimits(asked: Partial<Record<CellLimitName, number>>, caps: FilledCellLimitCaps): Partial<Record<RuntimeHeldLimit, number>> {
  const at = (value: unknown, cap: number) => (typeof value === 'number' && value >= 0 ? Math.min(value, cap) : cap);
  const heapMb = at(asked.heapMb, caps.heapMb);
  const result: Partial<Record<RuntimeHeldLimit, number>> = { heapMb };
  for (const name of RUNTIME_HELD_LIMITS) {
    const cap = caps[name];
    const value = asked[name];
    if (name === 'heapMb' || (cap === undefined && value === undefined)) continue;
    if (cap === undefined) result[name] = value;
    else if (typeof value === 'number' || limitAllowsNone(name)) result[name] = at(value, cap);
    else result[name] = at(limitDefault(name, heapMb), cap);
  }
  return result;
}

/**
 * What a runtime host (`serveRuntimeOverNats`) takes from the limits table: the names of the
 * limits it caps (every limit a runtime holds), `fill` (its caps checked, defaults filled in) and
 * `apply` (an `open-session`'s limits capped).
 */
export const RUNTIME_HOST_CAPS = { names: RUNTIME_HELD_LIMITS, fill: fillCellLimitCaps, apply: capCellLimits } as const;
