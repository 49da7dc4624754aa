import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configError } from '@switchyard/config/config-error';
import { AGENT_HELD_LIMITS, CELL_LIMITS, CELL_LIMIT_NAMES, PRELUDE_LIMITS, RUNTIME_HELD_LIMITS, RUNTIME_HOST_CAPS, limitDefault, type CellLimitName } from './cell-limits';
import { README_FILE, currentLimitsDocs, renderLimitsDocs } from './cell-limits-docs';
import { createCodeModeRuntime } from './index';
import { createRemoteRuntime } from './protocol-entry';
import { PROTOCOL_KINDS, parseHostMessage } from './protocol';
import { PRELUDE_CLOSURE } from './prelude/prelude-bundle.generated';
import { createTestHost, recordingPlacement } from '../test/helpers';

// Everything below is derived from the table: a limit added to CELL_LIMITS is checked here with no edit.

/** A valid value of every limit (its minimum, or 1 where the minimum is 0, or 8 MB of heap). */
const someLimits = Object.fromEntries(CELL_LIMIT_NAMES.map((name) => [name, Math.max(1, CELL_LIMITS[name].min)]));

const openSession = (options: Record<string, unknown>) => ({ t: 'open-session', id: 1, session: 's', options });

describe('the limits table', () => {
  it('has 13 limits, each held by the runtime or by the agent host', () => {
    expect(CELL_LIMIT_NAMES).toHaveLength(13);
    expect([...RUNTIME_HELD_LIMITS, ...AGENT_HELD_LIMITS].sort()).toEqual([...CELL_LIMIT_NAMES].sort());
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
    const read = new Set([...PRELUDE_CLOSURE.matchAll(/limits\.(\w+)/g)].map((match) => match[1]));
    read.add('heapMb'); // read by destructuring for the value size error
    expect([...read].sort()).toEqual([...PRELUDE_LIMITS, 'maxValueChars'].sort());
  });
});

describe("a runtime host's caps (RUNTIME_HOST_CAPS)", () => {
  const huge = Object.fromEntries(CELL_LIMIT_NAMES.map((name) => [name, 1e12])) as Record<CellLimitName, number>;

  it('cover every limit a runtime holds and drop the agent host\'s own', () => {
    expect([...RUNTIME_HOST_CAPS.names]).toEqual(RUNTIME_HELD_LIMITS);
    const capped = RUNTIME_HOST_CAPS.apply(huge, RUNTIME_HOST_CAPS.fill({}, String));
    for (const name of AGENT_HELD_LIMITS) expect(capped, name).not.toHaveProperty(name);
    for (const name of RUNTIME_HELD_LIMITS) {
      const cap = limitDefault(name, 128);
      expect(capped[name], name).toBe(cap === undefined ? 1e12 : cap);
    }
  });

  it('default to the table (one default per limit) and take a tighter bound by name', () => {
    const caps = RUNTIME_HOST_CAPS.fill({}, String);
    for (const name of RUNTIME_HELD_LIMITS) expect(caps[name], name).toBe(limitDefault(name, 128));
    for (const name of RUNTIME_HELD_LIMITS) {
      const bound = Math.max(8, CELL_LIMITS[name].min) + 1;
      expect(RUNTIME_HOST_CAPS.apply(huge, RUNTIME_HOST_CAPS.fill({ [name]: bound }, String))[name], name).toBe(bound);
    }
  });

  it('fill an absent limit at its default for the capped heap, and give a limit asked as none its cap', () => {
    const capped = RUNTIME_HOST_CAPS.apply({ heapMb: 1024 }, RUNTIME_HOST_CAPS.fill({ heapMb: 32, cpuTimeMs: 5_000 }, String));
    expect(capped).toMatchObject({ heapMb: 32, maxStoredBytes: limitDefault('maxStoredBytes', 32), cpuTimeMs: 5_000 });
    expect(capped).not.toHaveProperty('wallTimeMs');
  });

  it('refuse a cap under its minimum with a CONFIG error naming it', async () => {
    for (const name of RUNTIME_HELD_LIMITS) {
      const { min } = CELL_LIMITS[name];
      expect(await configError(() => RUNTIME_HOST_CAPS.fill({ [name]: min - 1 }, (key) => `host option limits.${key}`))).toBe(`host option limits.${name} must be a number >= ${min} (got ${min - 1})`);
    }
  });
});
