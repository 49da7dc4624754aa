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

  it('a value JSON would mangle is refused with the path of the offending member and what to return instead', () => {
    const circular: Record<string, unknown> = { a: { list: [1, 2] } };
    (circular.a as { list: unknown[] }).list.push(circular);
    class Row {
      constructor(readonly id: number) {}
    }
    const prefix = 'tool result is not JSON-serializable: ';
    const cases: Array<[unknown, string]> = [
      [{ stats: { count: 10n } }, 'result.stats.count is a BigInt: return a number or a string (String(value))'],
      [{ rows: [{ ok: 1 }, { 'odd key': [5n] }] }, 'result.rows[1]["odd key"][0] is a BigInt: return a number or a string (String(value))'],
      [circular, 'result.a.list[2] refers back to result (a cycle): return a tree, e.g. replace the back reference with an id'],
      [{ when: { toJSON: () => ({ n: 1n }) } }, 'result.when.n is a BigInt: return a number or a string (String(value))'],
      [{ blob: new Uint8Array([1, 2, 3]) }, 'result.blob is a Uint8Array: return an array of numbers or a base64 string'],
      [{ index: new Map([['a', 1]]) }, 'result.index is a Map: return a plain object (Object.fromEntries(map)) or an array of entries'],
      [{ tags: new Set(['a']) }, 'result.tags is a Set: return an array ([...set])'],
      [{ rows: [new Row(1)] }, 'result.rows[0] is a Row instance: return a plain object ({ ...value }) or give the class a toJSON() method'],
      [{ error: new Error('x') }, 'result.error is an Error instance: return a plain object ({ ...value }) or give the class a toJSON() method'],
      [{ ratio: Number.NaN }, 'result.ratio is NaN: JSON has no NaN or Infinity; return null or a string'],
      [[1, Number.POSITIVE_INFINITY], 'result[1] is Infinity: JSON has no NaN or Infinity; return null or a string'],
      [{ run: () => 1 }, 'result.run is a function: return data, not code'],
      [new Map(), 'result is a Map: return a plain object (Object.fromEntries(map)) or an array of entries'],
    ];
    for (const [value, message] of cases) {
      let caught: unknown;
      try {
        toToolOutput(value);
      } catch (error) {
        caught = error;
      }
      expect(isSwitchyardError(caught) && caught.code, message).toBe('RESPOND_TO_MODEL');
      expect((caught as Error).message).toBe(prefix + message);
    }
  });

  it("JSON's own conversions apply once, and the model, a cell and hooks all get the converted value", () => {
    const out = toToolOutput({ at: new Date(0), skipped: undefined, list: [undefined], zero: -0, nested: Object.assign(Object.create(null), { ok: true }) });
    const text = '{"at":"1970-01-01T00:00:00.000Z","list":[null],"zero":0,"nested":{"ok":true}}';
    expect(out.toResponseItem('c', fn)).toEqual({ type: 'function_call_output', call_id: 'c', output: text });
    expect(out.codeModeResult(fn)).toEqual(JSON.parse(text));
    expect(out.codeModeResultJson?.(fn)).toBe(text);
    expect(toToolOutput(undefined).toResponseItem('c', fn)).toEqual({ type: 'function_call_output', call_id: 'c', output: 'null' });
    // nothing converted: the handler's own value, not a copy
    const plain = { a: [1, 'two', null, { b: false }] };
    expect((toToolOutput(plain) as JsonToolOutput).value).toBe(plain);
  });
});
