import { describe, expect, it } from 'vitest';
import { isSwitchyardError } from '@switchyard/protocol';
import { JsonToolOutput } from './output';
import { defineFunctionTool, toToolOutput } from './define';

// A result typed by an `interface` has no index signature, so it is not assignable to a JSON value
// type; handlers and JsonToolOutput take it anyway (this file is type-checked by `npm test`).
interface Forecast {
  city: string;
  tempC: number;
  hourly: Array<{ hour: number; tempC: number }>;
}

const forecast: Forecast = { city: 'Oslo', tempC: -3, hourly: [{ hour: 9, tempC: -4 }] };
const fn = { kind: 'function', arguments: '{}' } as const;

describe('results of any object type', () => {
  it('a handler returning an interface-typed value compiles and answers its JSON text', async () => {
    const tool = defineFunctionTool<{ city: string }>({
      name: 'forecast',
      description: 'Forecast for a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      handle: async ({ args }): Promise<Forecast> => ({ ...forecast, city: args.city }),
    });
    expect(tool.spec).toMatchObject({ type: 'function', name: 'forecast' });
    const out = new JsonToolOutput(forecast);
    expect(out.toResponseItem('c1', fn)).toEqual({ type: 'function_call_output', call_id: 'c1', output: JSON.stringify(forecast) });
    expect(out.codeModeResult()).toEqual(forecast);
  });

  it('a value that cannot be serialized is refused with the path of the offending member', () => {
    const circular: Record<string, unknown> = { a: { list: [1, 2] } };
    (circular.a as { list: unknown[] }).list.push(circular);
    const cases: Array<[unknown, string]> = [
      [{ stats: { count: 10n } }, 'tool result is not JSON-serializable: Do not know how to serialize a BigInt (at result.stats.count)'],
      [{ rows: [{ ok: 1 }, { 'odd key': [5n] }] }, 'tool result is not JSON-serializable: Do not know how to serialize a BigInt (at result.rows[1]["odd key"][0])'],
      [circular, 'tool result is not JSON-serializable: Converting circular structure to JSON (at result.a.list[2])'],
      [{ when: { toJSON: () => ({ n: 1n }) } }, 'tool result is not JSON-serializable: Do not know how to serialize a BigInt (at result.when.n)'],
    ];
    for (const [value, message] of cases) {
      let caught: unknown;
      try {
        toToolOutput(value);
      } catch (error) {
        caught = error;
      }
      expect(isSwitchyardError(caught) && caught.code, message).toBe('RESPOND_TO_MODEL');
      expect((caught as Error).message).toBe(message);
    }
  });

  it('dates and members that JSON drops serialize as JSON.stringify does', () => {
    const out = toToolOutput({ at: new Date(0), skipped: undefined, list: [undefined] });
    expect(out.toResponseItem('c', fn)).toEqual({ type: 'function_call_output', call_id: 'c', output: '{"at":"1970-01-01T00:00:00.000Z","list":[null]}' });
  });
});
