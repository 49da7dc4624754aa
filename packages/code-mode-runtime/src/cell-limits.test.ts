import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configError } from '@switchyard/config/config-error';
import { SwitchyardError } from '@switchyard/protocol';
import { AGENT_HELD_LIMITS, CELL_LIMITS, CELL_LIMIT_NAMES, PRELUDE_LIMITS, RUNTIME_HELD_LIMITS, RUNTIME_HOST_CAPS, limitDefault, type CellLimitCapCheck, type CellLimitName } from './cell-limits';
import { README_FILE, currentLimitsDocs, renderLimitsDocs } from './cell-limits-docs';
import { createCodeModeRuntime } from './index';
import { createRemoteRuntime } from './protocol-entry';
import { PROTOCOL_KINDS, parseHostMessage } from './protocol';
import { PRELUDE_CLOSURE } from './prelude/prelude-bundle.generated';
import { createTestHost, recordingPlacement } from '../test/helpers';

// Everything below is derived from the table: a limit added to CELL_LIMITS is checked here with no edit.

/** A valid value of every limit (its minimum, or 1 where the minimum is 0, or 8 MB of heap). */
const someLimits = Object.fromEntries(CELL_LIMIT_NAMES.map((name) => [name, Math.max(1, CELL_LIMITS[name].min)]));

/** Who holds each limit, in the table's order (the runtime, a runtime host capping them; or the agent host alone). */
const RUNTIME_HELD = ['heapMb', 'cpuTimeMs', 'wallTimeMs', 'maxCells', 'maxInFlightCalls', 'maxInFlightArgumentChars', 'maxOutputBytes', 'maxOutputItems', 'maxTimers', 'maxStoredBytes'];
const AGENT_HELD = ['maxStoredKeys', 'maxJournalBytes', 'maxInFlightResultBytes'];

/** A host's check of a cap that takes every value as given. */
const accept: CellLimitCapCheck = (value) => value as number;

const openSession = (options: Record<string, unknown>) => ({ t: 'open-session', id: 1, session: 's', options });

describe('the limits table', () => {
  it('has 13 limits, each held by the runtime or by the agent host', () => {
    expect(CELL_LIMIT_NAMES).toHaveLength(13);
    // the partition spelled out: moving a limit to the other holder (or adding one) is a visible edit here
    expect({ runtime: RUNTIME_HELD_LIMITS, agent: AGENT_HELD_LIMITS }).toEqual({ runtime: RUNTIME_HELD, agent: AGENT_HELD });
  });

  it('the README table is what the table renders (after editing cell-limits.ts: pnpm --filter @switchyard/code-mode-runtime run docs:limits)', () => {
    expect(currentLimitsDocs(readFileSync(README_FILE, 'utf8'))).toBe(renderLimitsDocs());
  });

  it("the README's default of each limit is the table's default at the default heap (128 MB)", () => {
    const spelled = (value: number) => [value.toLocaleString('en-US'), `${value / 1024 / 1024} MiB`];
    for (const name of CELL_LIMIT_NAMES) {
      const value = limitDefault(name, 128);
      const text = CELL_LIMITS[name].defaultText;
      if (value === undefined) expect(text, name).toBe('none');
      else expect(spelled(value).some((form) => text.includes(form)), `${name}: "${text}" does not say ${value}`).toBe(true);
    }
  });
});

describe('the wire kind (EngineSessionOptions in open-session)', () => {
  const engineKind = PROTOCOL_KINDS.find((kind) => kind.named?.name === 'EngineSessionOptions')!;
  const shape = engineKind.named!.variants[0].shape;

  it('has a field for every limit (optional where the table says so) and storedValues', () => {
    expect(Object.keys(shape).sort()).toEqual([...CELL_LIMIT_NAMES, 'storedValues'].sort());
    for (const name of CELL_LIMIT_NAMES) expect(shape[name].optional === true, name).toBe('optionalOnWire' in CELL_LIMITS[name]);
  });

  it('accepts every limit and refuses each one out of its kind', () => {
    expect(() => parseHostMessage(openSession({ ...someLimits, storedValues: true }))).not.toThrow();
    for (const name of CELL_LIMIT_NAMES) {
      expect(() => parseHostMessage(openSession({ ...someLimits, storedValues: true, [name]: -1 })), name).toThrow(name);
      if ('optionalOnWire' in CELL_LIMITS[name]) continue;
      const { [name]: _dropped, ...rest } = someLimits;
      expect(() => parseHostMessage(openSession({ ...rest, storedValues: true })), name).toThrow(name);
    }
  });
});

describe('the option rules', () => {
  it('refuse a value under the minimum and a string with a CONFIG error naming the option, in both runtimes', async () => {
    const { placement } = recordingPlacement();
    for (const name of CELL_LIMIT_NAMES) {
      const { min } = CELL_LIMITS[name];
      const orFalse = 'none' in CELL_LIMITS[name] ? ' or false' : '';
      expect(await configError(() => createCodeModeRuntime({ [name]: min - 1 }))).toBe(`createCodeModeRuntime: option \`${name}\` must be a number ≥ ${min}${orFalse}; got ${min - 1}`);
      expect(await configError(() => createRemoteRuntime({ placement, [name]: 'x' as never }))).toBe(`createRemoteRuntime: option \`${name}\` must be a number ≥ ${min}${orFalse}; got "x"`);
    }
  });

  it('take false as no limit exactly where the table allows none', async () => {
    for (const name of CELL_LIMIT_NAMES) {
      const create = () => createCodeModeRuntime({ isolation: 'in-process', nodeSnapshotCheck: 'ignore', [name]: false });
      if ('none' in CELL_LIMITS[name]) expect(create, name).not.toThrow();
      else expect(await configError(create), name).toContain(`option \`${name}\``);
    }
  });
});

describe('the defaults', () => {
  for (const heapMb of [undefined, 32]) {
    it(`a fresh runtime sends the table's default of every limit with the session (heapMb ${heapMb ?? 'default'})`, async () => {
      const { placement, sent } = recordingPlacement();
      const runtime = createRemoteRuntime({ placement, ...(heapMb === undefined ? {} : { heapMb }) });
      try {
        const session = runtime.openSession(createTestHost().host);
        await session.createCell({ source: `text('ok')`, tools: [], yieldTimeMs: 10_000 });
        const opened = sent.find((message) => (message as { t: string }).t === 'open-session') as { options: Record<string, unknown> };
        const expected = Object.fromEntries(CELL_LIMIT_NAMES.map((name) => [name, limitDefault(name, heapMb ?? 128)]).filter(([, value]) => value !== undefined));
        expect(opened.options).toEqual({ ...expected, heapMb: heapMb ?? 128, storedValues: true });
      } finally {
        await runtime.shutdown();
      }
    });
  }
});

describe('the prelude', () => {
  it('reads exactly the limits the table marks prelude (and the value size limit)', () => {
    // read as `limits.x`, or by destructuring (`const { x, y } = config.limits`)
    const read = new Set([...PRELUDE_CLOSURE.matchAll(/limits\.(\w+)/g)].map((match) => match[1]));
    for (const [, names] of PRELUDE_CLOSURE.matchAll(/\{([\w\s,]+)\} = (?:config\.)?limits\b/g)) for (const name of names!.split(',')) read.add(name.trim());
    expect([...read].sort()).toEqual([...PRELUDE_LIMITS, 'maxValueChars'].sort());
  });
});

describe("a runtime host's caps (RUNTIME_HOST_CAPS)", () => {
  const huge = Object.fromEntries(CELL_LIMIT_NAMES.map((name) => [name, 1e12])) as Record<CellLimitName, number>;

  it('cover every limit a runtime holds and drop the agent host\'s own', () => {
    expect([...RUNTIME_HOST_CAPS.names]).toEqual(RUNTIME_HELD);
    const capped = RUNTIME_HOST_CAPS.apply(huge, RUNTIME_HOST_CAPS.fill({}, accept));
    for (const name of AGENT_HELD_LIMITS) expect(capped, name).not.toHaveProperty(name);
    for (const name of RUNTIME_HELD_LIMITS) {
      const cap = limitDefault(name, 128);
      expect(capped[name], name).toBe(cap === undefined ? 1e12 : cap);
    }
  });

  it('default to the table (one default per limit) and take a tighter bound by name', () => {
    const caps = RUNTIME_HOST_CAPS.fill({}, accept);
    for (const name of RUNTIME_HELD_LIMITS) expect(caps[name], name).toBe(limitDefault(name, 128));
    for (const name of RUNTIME_HELD_LIMITS) {
      const bound = Math.max(8, CELL_LIMITS[name].min) + 1;
      expect(RUNTIME_HOST_CAPS.apply(huge, RUNTIME_HOST_CAPS.fill({ [name]: bound }, accept))[name], name).toBe(bound);
    }
  });

  it('fill an absent limit at its default for the capped heap, and give a limit asked as none its cap', () => {
    const capped = RUNTIME_HOST_CAPS.apply({ heapMb: 1024 }, RUNTIME_HOST_CAPS.fill({ heapMb: 32, cpuTimeMs: 5_000 }, accept));
    expect(capped).toMatchObject({ heapMb: 32, maxStoredBytes: limitDefault('maxStoredBytes', 32), cpuTimeMs: 5_000 });
    expect(capped).not.toHaveProperty('wallTimeMs');
  });

  it("check each cap given with the host's check, against the limit's minimum (a refusal is the check's CONFIG error)", async () => {
    // the host's check (a runtime host's names the option: code-mode-nats/test/options.test.ts)
    const check: CellLimitCapCheck = (value, key, min) => {
      if (typeof value === 'number' && value >= min) return value;
      throw new SwitchyardError('CONFIG', `host option limits.${key} must be a number >= ${min} (got ${String(value)})`);
    };
    for (const name of RUNTIME_HELD_LIMITS) {
      const { min } = CELL_LIMITS[name];
      expect(await configError(() => RUNTIME_HOST_CAPS.fill({ [name]: min - 1 }, check))).toBe(`host option limits.${name} must be a number >= ${min} (got ${min - 1})`);
    }
    // only the caps given are checked, each once, and a cap is what the check returns
    const calls: unknown[] = [];
    const caps = RUNTIME_HOST_CAPS.fill({ heapMb: 64.5, maxTimers: 7.9 }, (value, key, min) => (calls.push([value, key, min]), Math.floor(value as number)));
    expect(calls).toEqual([[64.5, 'heapMb', 8], [7.9, 'maxTimers', 1]]);
    expect(caps).toMatchObject({ heapMb: 64, maxTimers: 7, maxStoredBytes: limitDefault('maxStoredBytes', 64) });
  });
});
