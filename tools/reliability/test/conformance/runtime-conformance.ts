/**
 * One conformance suite for every placement of Code Mode cells: the in-process runtime, the
 * worker-process runtime, the NATS runtime and the runtime protocol over an in-memory link (with
 * and without faults) run these same cases. Each asserts what the model would see: the exact items
 * and error texts of observations, yield / wait, stored values, limits, and (where a process
 * boundary exists) crash containment.
 */
import type { CellHost, CellObservation, CellToolDescriptor, CodeModeRuntime, CodeModeSession } from '@switchyard/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cellTexts } from '@switchyard/test-helpers';

/** The per-cell limits every placement's runtime is created with. */
export const CONFORMANCE_LIMITS = { heapMb: 32, cpuTimeMs: 1_500, maxOutputItems: 20, maxCells: 4 } as const;

/** What a case changes of `CONFORMANCE_LIMITS`. */
export interface ConformanceOverrides {
  cpuTimeMs?: number | false;
}

/** One placement under test. */
export interface ConformancePlacement {
  /** A runtime with `CONFORMANCE_LIMITS` and then `overrides` (the suite makes one, the crash case its own). */
  createRuntime(overrides?: ConformanceOverrides): Promise<CodeModeRuntime> | CodeModeRuntime;
  /** Whether a cell that crashes V8 ends only a runtime process (false: isolates in this process). */
  containsCrashes: boolean;
  /** Ends what the placement started (servers, processes), after the runtime has shut down. */
  cleanup?(): Promise<void>;
}

const TOOLS: CellToolDescriptor[] = [
  { name: 'echo', description: 'Returns its input.', kind: 'function' },
  { name: 'fail', description: 'Fails.', kind: 'function' },
  { name: 'slow', description: 'Answers after input.ms.', kind: 'function' },
];

/** A host whose tools are `echo`, `fail` and `slow`, recording notifications. */
export function conformanceHost() {
  const notifications: Array<{ cellId: string; text: string }> = [];
  const host: CellHost = {
    invokeTool: async ({ tool, input, signal }) => {
      if (tool === 'echo') return input ?? null;
      if (tool === 'fail') throw 'disk on fire';
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve('slow done'), (input as { ms: number }).ms);
        signal.addEventListener('abort', () => clearTimeout(timer));
      });
    },
    notify: (notification) => notifications.push(notification),
    cellClosed: () => {},
  };
  return { host, notifications };
}

const PNG = 'data:image/png;base64,iVBORw0KGgo=';

/** Registers the shared cases for one placement. */
export function describeRuntimeConformance(name: string, placement: ConformancePlacement): void {
  describe(`runtime conformance: ${name}`, () => {
    let runtime: CodeModeRuntime;
    let session: CodeModeSession;
    let recorded: ReturnType<typeof conformanceHost>;
    const run = async (source: string, yieldTimeMs = 30_000, on = session) => (await on.createCell({ source, tools: TOOLS, yieldTimeMs })).observation;

    beforeAll(async () => {
      runtime = await placement.createRuntime();
      recorded = conformanceHost();
      session = runtime.openSession(recorded.host);
    }, 120_000);
    afterAll(async () => {
      await runtime?.shutdown();
      await placement.cleanup?.();
    }, 60_000);

    it('text, console and image items reach the observation exactly; notify reaches the host', async () => {
      const observation = await run(`text('a'); text({ b: 1 }); console.log('c', 2, [3]); image('${PNG}', 'LOW'); notify('note');`);
      expect(observation).toMatchObject({
        kind: 'completed',
        items: [
          { type: 'input_text', text: 'a' },
          { type: 'input_text', text: '{"b":1}' },
          { type: 'input_text', text: 'c 2 [3]' },
          { type: 'input_image', image_url: PNG, detail: 'low' },
        ],
      });
      expect('error' in observation).toBe(false);
      expect(recorded.notifications.at(-1)).toEqual({ cellId: observation.cellId, text: 'note' });
    });

    it('nested calls resolve with the result; a failed call rejects with its exact text, uncaught it is the cell error', async () => {
      const observation = await run(
        `const r = await tools.echo({ n: 1 }); text(r); const all = await Promise.all(Array.from({ length: 20 }, (_, i) => tools.echo({ i })));
         text(all.map((x) => x.i).join(',')); try { await tools.fail({}); } catch (e) { text(e.name + ': ' + e.message); } await tools.fail();`,
      );
      expect(observation).toMatchObject({ kind: 'completed', error: 'disk on fire' });
      expect(cellTexts(observation)).toEqual(['{"n":1}', Array.from({ length: 20 }, (_, i) => i).join(','), 'ToolCallError: disk on fire']);
    });

    it('yield_control hands over the output so far; wait (observe) gets the rest and the completion', async () => {
      const first = await session.createCell({ source: `text('before'); yield_control(); await tools.slow({ ms: 200 }); text('after');`, tools: TOOLS, yieldTimeMs: 30_000 });
      expect(first.observation).toMatchObject({ kind: 'yielded', items: [{ type: 'input_text', text: 'before' }] });
      const rest = await session.observe(first.cellId, { yieldTimeMs: 30_000 });
      expect(rest).toMatchObject({ kind: 'completed', cellId: first.cellId, items: [{ type: 'input_text', text: 'after' }] });
      expect('error' in rest).toBe(false);
    });

    it('the yield time yields a waiting cell; terminate ends it with the output not yet observed; the id is then unknown', async () => {
      const started = await session.createCell({ source: `text('x'); await new Promise(() => {});`, tools: TOOLS, yieldTimeMs: 500 });
      expect(started.observation).toMatchObject({ kind: 'yielded', cellId: started.cellId });
      const ended = await session.terminate(started.cellId);
      expect(ended).toMatchObject({ kind: 'terminated', cellId: started.cellId });
      // whatever the first observation did not take (a slow start), the terminate caller gets
      expect([...cellTexts(started.observation), ...cellTexts(ended)]).toEqual(['x']);
      await expect(session.observe(started.cellId, { yieldTimeMs: 1_000 })).rejects.toMatchObject({ code: 'CELL_NOT_FOUND', message: `exec cell ${started.cellId} not found` });
    });

    it('stored values: completed and failed cells commit their writes, a terminated one does not; sessions are apart', async () => {
      expect(cellTexts(await run(`store('k', { v: 1 }); store('gone', 0); text('stored');`))).toEqual(['stored']);
      expect(await run(`store('gone', 2); store('other', 3); throw 'boom';`)).toMatchObject({ kind: 'completed', error: 'boom' });
      const waiting = await session.createCell({ source: `store('k', 'never'); await new Promise(() => {});`, tools: TOOLS, yieldTimeMs: 200 });
      expect(await session.terminate(waiting.cellId)).toMatchObject({ kind: 'terminated' });
      expect(cellTexts(await run(`text(load('k')); text(load('gone')); text(load('other'));`))).toEqual(['{"v":1}', '2', '3']);
      const other = runtime.openSession(conformanceHost().host);
      expect(cellTexts(await run(`text(String(load('k')));`, 30_000, other))).toEqual(['undefined']);
      await other.shutdown();
    });

    it('errors: a thrown string is the error; a thrown Error is its stack', async () => {
      expect(await run(`text('partial'); throw 'plain';`)).toMatchObject({ kind: 'completed', items: [{ text: 'partial' }], error: 'plain' });
      const failed = await run(`throw new TypeError('bad');`);
      expect(failed.kind === 'completed' && failed.error).toMatch(/^TypeError: bad\n {4}at /);
    });

    it('limits: CPU time, output items and value size fail only their cell, with exact texts', async () => {
      expect(await run(`text('spin'); for (;;) {}`)).toMatchObject({ kind: 'completed', items: [{ text: 'spin' }], error: `exec cell exceeded its CPU time limit of ${CONFORMANCE_LIMITS.cpuTimeMs} ms` });
      const flood = await run(`for (let i = 0; i < 25; i++) text(i);`);
      expect(flood).toMatchObject({ kind: 'completed', error: 'exec output limit exceeded: a cell may produce at most 20 output items (text, image and notify calls)' });
      expect(flood.items).toHaveLength(20);
      expect(await run(`text('x'.repeat(4194305));`)).toMatchObject({
        error: 'exec value size limit exceeded: a text() item is 4194305 characters, over the limit of 4194304 characters per value for a cell with a heap limit of 32 MB',
      });
      expect(cellTexts(await run(`text('still fine');`))).toEqual(['still fine']);
    });

    it('limits: a session holds at most maxCells cells; the next is refused with LIMIT_EXCEEDED', async () => {
      const own = runtime.openSession(conformanceHost().host);
      const held = [];
      for (let i = 0; i < CONFORMANCE_LIMITS.maxCells; i++) held.push(await own.createCell({ source: `await new Promise(() => {});`, tools: TOOLS, yieldTimeMs: 50 }));
      await expect(own.createCell({ source: `text(1)`, tools: TOOLS, yieldTimeMs: 50 })).rejects.toMatchObject({
        code: 'LIMIT_EXCEEDED',
        message: 'exec cell limit reached: this session already runs 4 cells (limit 4); wait for one to finish or terminate one',
      });
      for (const cell of held) expect(await own.terminate(cell.cellId)).toMatchObject({ kind: 'terminated' });
      expect(cellTexts(await run(`text('room again');`, 30_000, own))).toEqual(['room again']);
      await own.shutdown();
    });

    if (placement.containsCrashes) {
      it('a V8 fatal ends only the cell that caused it: its error says the runtime ended, the next session runs', async () => {
        // Its own runtime without a CPU limit: on a loaded machine the fatal may take longer than the suite's.
        const unlimited = await placement.createRuntime({ cpuTimeMs: false });
        try {
          const victim = unlimited.openSession(conformanceHost().host);
          const crashed = await run(`text("x".repeat(2 ** 28).split("").length);`, 60_000, victim);
          expect(crashed.kind === 'completed' && crashed.error).toMatch(/^exec runtime ended unexpectedly: ./);
          const next = unlimited.openSession(conformanceHost().host);
          expect(cellTexts(await run(`text('alive');`, 60_000, next))).toEqual(['alive']);
        } finally {
          await unlimited.shutdown();
        }
      }, 120_000);
    }
  });
}
