import { applyFunction, call, construct, define, describeProperty, parseIntOf, TypeErrorOf } from './primordials';

/**
 * Makes everything a cell can observe either journaled or pinned, so that a replay of the cell
 * from its journal is the same cell (the isolate's globals: V8's built-ins, no `performance`, no
 * `crypto`, no `Temporal`):
 * - **the clock**: `Date.now()`, `new Date()`, `Date()` and a date-less `Intl.DateTimeFormat`
 *   `format()` / `formatToParts()` read `now`, which the journal records (or answers in a replay);
 * - **randomness**: `Math.random` is a seeded generator (sfc32, 128 bits of state) whose seed the
 *   host chose and journaled;
 * - **the garbage collector**: `WeakRef` holds its target strongly (`deref()` always returns it)
 *   and `FinalizationRegistry` never calls back, since when V8 collects is not journaled.
 */
export function installDeterminism(global: Record<string, unknown>, seed: string, now: () => number): void {
  installClock(global, now);
  installRandom(seed);
  installWeakRefs(global);
}

/** A non-enumerable own property, as built-ins have. */
function builtIn(target: object, key: PropertyKey, value: unknown): void {
  define(target, key, { value, writable: true, enumerable: false, configurable: true });
}

function installClock(global: Record<string, unknown>, now: () => number): void {
  const OriginalDate = global.Date as DateConstructor;
  const dateString: (date: Date) => string = call.bind(OriginalDate.prototype.toString);
  // Seven parameters: `Date.length` is 7.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  function DateShim(this: unknown, _year?: unknown, _month?: unknown, _day?: unknown, _hours?: unknown, _minutes?: unknown, _seconds?: unknown, _ms?: unknown): unknown {
    // `Date()` called as a function: the current time as a string, whatever the arguments.
    if (new.target === undefined) return dateString(new OriginalDate(now()));
    // `arguments` is read by index and length, never iterated.
    if (arguments.length === 0) return construct(OriginalDate, [now()], new.target);
    return construct(OriginalDate, arguments, new.target);
  }
  define(DateShim, 'prototype', { value: OriginalDate.prototype, writable: false, enumerable: false, configurable: false });
  define(DateShim, 'name', { value: 'Date', configurable: true });
  builtIn(OriginalDate.prototype, 'constructor', DateShim);
  builtIn(DateShim, 'now', function now_() {
    return now();
  });
  define((DateShim as unknown as { now: () => number }).now, 'name', { value: 'now', configurable: true });
  builtIn(DateShim, 'parse', OriginalDate.parse);
  builtIn(DateShim, 'UTC', OriginalDate.UTC);
  builtIn(global, 'Date', DateShim);

  const intl = global.Intl as { DateTimeFormat?: { prototype: object } } | undefined;
  const proto = intl?.DateTimeFormat?.prototype;
  if (!proto) return;
  const formatGetter = describeProperty(proto, 'format')?.get;
  const formatToParts = describeProperty(proto, 'formatToParts')?.value as ((date?: unknown) => unknown) | undefined;
  if (formatGetter) {
    define(proto, 'format', {
      get() {
        const bound = applyFunction(formatGetter, this, []) as (date?: unknown) => string;
        return function format(date?: unknown) {
          return bound(date === undefined ? now() : date);
        };
      },
      enumerable: false,
      configurable: true,
    });
  }
  if (formatToParts) {
    builtIn(proto, 'formatToParts', function formatToParts_(this: unknown, date?: unknown) {
      return applyFunction(formatToParts, this, [date === undefined ? now() : date]);
    });
  }
}

/** `Math.random` from sfc32 seeded with the 32 hex digits of `seed` (a malformed seed counts as zeros). */
function installRandom(seed: string): void {
  const word = (index: number) => {
    // Runs while the prelude installs itself, before any user code: the built-ins are still the originals.
    const value = parseIntOf(seed.length === 32 ? seed.slice(index * 8, index * 8 + 8) : '0', 16);
    return value === value ? value | 0 : 0;
  };
  let a = word(0);
  let b = word(1);
  let c = word(2);
  let d = word(3);
  function next(): number {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  }
  for (let i = 0; i < 15; i++) next();
  builtIn(Math, 'random', function random() {
    // 53 random bits, as V8's Math.random has.
    return ((next() >>> 5) * 67108864 + (next() >>> 6)) / 9007199254740992;
  });
}

const isTarget = (value: unknown) => (typeof value === 'object' && value !== null) || typeof value === 'function' || typeof value === 'symbol';

function installWeakRefs(global: Record<string, unknown>): void {
  const WeakMapOf = WeakMap;
  const mapHas: (map: WeakMap<object, true>, key: object) => boolean = call.bind(WeakMapOf.prototype.has);
  const mapSet: (map: WeakMap<object, true>, key: object, value: true) => unknown = call.bind(WeakMapOf.prototype.set);
  const mapDelete: (map: WeakMap<object, true>, key: object) => boolean = call.bind(WeakMapOf.prototype.delete);
  /** A WeakRef that never lets go: what `deref()` returns does not depend on the collector. */
  class WeakRef {
    readonly #target: object;
    constructor(target: object) {
      if (!isTarget(target)) throw new TypeErrorOf('WeakRef: invalid target');
      this.#target = target;
    }
    deref(): object {
      return this.#target;
    }
  }
  define(WeakRef.prototype, Symbol.toStringTag, { value: 'WeakRef', configurable: true });
  /** A FinalizationRegistry whose callback never runs (it would run when V8 collects). */
  class FinalizationRegistry {
    readonly #tokens = new WeakMapOf<object, true>();
    constructor(cleanup: unknown) {
      if (typeof cleanup !== 'function') throw new TypeErrorOf('FinalizationRegistry: cleanup must be callable');
    }
    register(target: object, held: unknown, token?: object): undefined {
      if (!isTarget(target)) throw new TypeErrorOf('FinalizationRegistry.prototype.register: invalid target');
      if (target === held) throw new TypeErrorOf('FinalizationRegistry.prototype.register: target and holdings must not be same');
      if (token !== undefined) {
        if (!isTarget(token)) throw new TypeErrorOf('FinalizationRegistry.prototype.register: invalid unregister token');
        mapSet(this.#tokens, token, true);
      }
      return undefined;
    }
    unregister(token: object): boolean {
      if (!isTarget(token)) throw new TypeErrorOf('FinalizationRegistry.prototype.unregister: invalid unregister token');
      const had = mapHas(this.#tokens, token);
      mapDelete(this.#tokens, token);
      return had;
    }
  }
  define(FinalizationRegistry.prototype, Symbol.toStringTag, { value: 'FinalizationRegistry', configurable: true });
  builtIn(global, 'WeakRef', WeakRef);
  builtIn(global, 'FinalizationRegistry', FinalizationRegistry);
}
