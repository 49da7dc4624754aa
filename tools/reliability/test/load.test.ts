import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineFunctionTool } from '@switchyard/kit';
import { byProfile, report } from '../src/profile';
import { execItem, openHarness, outcome, type Harness } from './helpers';

const CELLS = 50;
const CALLS = byProfile(100, 1_000);

const received = new Map<string, number[]>();
const counter = defineFunctionTool({
  name: 'count',
  description: 'Records (cell, i) and answers i.',
  parameters: { type: 'object', properties: { cell: { type: 'string' }, i: { type: 'integer' } }, required: ['cell', 'i'] },
  supportsParallelToolCalls: true,
  handle: async ({ args }) => {
    const list = received.get(args.cell as string) ?? [];
    list.push(args.i as number);
    received.set(args.cell as string, list);
    return { i: args.i as number };
  },
});

let harness: Harness;
beforeAll(async () => {
  harness = await openHarness({ tools: [counter], runtimeOptions: { maxCells: CELLS + 4 } });
});
afterAll(() => harness.close());

describe('load', () => {
  it(`${CELLS} concurrent cells × ${CALLS} nested calls each: every output accounted for, in order`, async () => {
    const started = Date.now();
    const items = Array.from({ length: CELLS }, (_, cell) =>
      execItem(
        `load-${cell}`,
        `// @exec: {"yield_time_ms": 300000, "max_output_tokens": 100000}\nconst seen = [];\nfor (let i = 0; i < ${CALLS}; i++) { const r = await tools.count({ cell: 'c${cell}', i }); seen.push(r.i); }\ntext(seen.join(','));`,
      ),
    );
    const outputs = await harness.step.dispatchAll(items);
    const elapsed = Date.now() - started;
    expect(outputs.map((item) => item.call_id)).toEqual(items.map((item) => (item as { call_id: string }).call_id));
    const expected = Array.from({ length: CALLS }, (_, i) => i);
    for (let cell = 0; cell < CELLS; cell++) {
      const result = outcome(outputs[cell]);
      expect(result.status, `cell ${cell}`).toBe('completed');
      expect(result.output, `cell ${cell}`).toEqual([expected.join(',')]);
      expect(received.get(`c${cell}`), `cell ${cell}`).toEqual(expected);
    }
    const total = [...received.values()].reduce((sum, list) => sum + list.length, 0);
    expect(total).toBe(CELLS * CALLS);
    report('load', `${CELLS} concurrent cells × ${CALLS} nested calls = ${total} calls in ${elapsed} ms; every cell completed with its outputs in order, every call seen once by the tool`);
  });
});
