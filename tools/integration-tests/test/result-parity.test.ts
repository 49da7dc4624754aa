import { describe, expect, it } from 'vitest';
import { useCleanups } from '@switchyard/test-helpers';
import { createHookEngine } from '@switchyard/hooks';
import { defineFunctionTool, type ToolHandlerResult } from '@switchyard/kit';
import type { ResponseItem } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { exec, say, texts } from './helpers';

// One plugin, two hosts: a session without hooks and one with a hook engine (a PostToolUse hook
// that reads every result). Each kind of value a handler may return must reach the model the same
// way in both: converted as JSON converts it, or refused with the same one-line failure.
class Row {
  constructor(readonly id: number) {}
}
const cycle: Record<string, unknown> = { name: 'root' };
cycle.self = cycle;

// Values of any kind, Map and BigInt included: what a plugin may return whatever its types say.
const KINDS: Record<string, () => ToolHandlerResult> = {
  date: () => ({ at: new Date(0) }),
  'typed array': () => ({ blob: new Uint8Array([1, 2, 3]) }),
  map: () => ({ index: new Map([['a', 1]]) }),
  set: () => ({ tags: new Set(['x']) }),
  'class instance': () => ({ row: new Row(7) }),
  nan: () => ({ ratio: Number.NaN }),
  infinity: () => ({ ratio: Number.POSITIVE_INFINITY }),
  undefined: () => ({ kept: 1, dropped: undefined, list: [undefined] }),
  'negative zero': () => ({ zero: -0 }),
  bigint: () => ({ count: 10n }),
  cycle: () => cycle,
  'top-level undefined': () => undefined,
};

const EXPECTED: Record<string, string> = {
  date: '{"at":"1970-01-01T00:00:00.000Z"}',
  'typed array': 'tool result is not JSON-serializable: result.blob is a Uint8Array: return an array of numbers or a base64 string',
  map: 'tool result is not JSON-serializable: result.index is a Map: return a plain object (Object.fromEntries(map)) or an array of entries',
  set: 'tool result is not JSON-serializable: result.tags is a Set: return an array ([...set])',
  'class instance': 'tool result is not JSON-serializable: result.row is a Row instance: return a plain object ({ ...value }) or give the class a toJSON() method',
  nan: 'tool result is not JSON-serializable: result.ratio is NaN: JSON has no NaN or Infinity; return null or a string',
  infinity: 'tool result is not JSON-serializable: result.ratio is Infinity: JSON has no NaN or Infinity; return null or a string',
  undefined: '{"kept":1,"list":[null]}',
  'negative zero': '{"zero":0}',
  bigint: 'tool result is not JSON-serializable: result.count is a BigInt: return a number or a string (String(value))',
  cycle: 'tool result is not JSON-serializable: result.self refers back to result (a cycle): return a tree, e.g. replace the back reference with an id',
  'top-level undefined': 'null',
};

const tool = defineFunctionTool({
  name: 'value_of',
  description: 'Returns a value of the given kind.',
  parameters: { type: 'object', properties: { kind: { type: 'string', enum: Object.keys(KINDS) } }, required: ['kind'] },
  handle: ({ args }) => KINDS[args.kind](),
});

const { defer } = useCleanups();

/** The hooks a policy host runs: a PostToolUse hook that reads every result (and records it). */
function policyHooks(seen: unknown[]) {
  return createHookEngine({ functionHooks: [{ event: 'PostToolUse', run: (input) => void seen.push((input as { tool_response?: unknown }).tool_response) }] });
}

const valueOfCall = (kind: string): ResponseItem => ({ type: 'function_call', call_id: `c-${kind}`, name: 'value_of', arguments: JSON.stringify({ kind }) });

async function directOutputs(withHooks: boolean, seen: unknown[]): Promise<Record<string, unknown>> {
  const hooks = withHooks ? policyHooks(seen) : undefined;
  const session = defer(createSession({ toolMode: 'direct', tools: [tool], ...(hooks ? { hooks } : {}) }), (opened) => opened.shutdown());
  const model = createScriptedModel([Object.keys(KINDS).map(valueOfCall), [say('done')]]);
  const result = await session.runTurn({ model, input: 'values' });
  await hooks?.close();
  const outputs = result.items.filter((item) => item.type === 'function_call_output') as Array<{ call_id: string; output: unknown }>;
  return Object.fromEntries(outputs.map((item) => [item.call_id.slice(2), item.output]));
}

describe('a result reaches the model the same way with and without a hook engine', () => {
  it('direct calls: each value kind is converted or refused identically, and the hook reads the converted value', async () => {
    const seen: unknown[] = [];
    const without = await directOutputs(false, []);
    const withHooks = await directOutputs(true, seen);
    expect(without).toEqual(EXPECTED);
    expect(withHooks).toEqual(EXPECTED);
    // The hook ran for the results that succeeded and read what the model read, as JSON.
    expect(seen).toEqual([{ at: '1970-01-01T00:00:00.000Z' }, { kept: 1, list: [null] }, { zero: 0 }, null]);
  });

  it('Code Mode: a cell receives the same value with and without hooks', async () => {
    const cell = `for (const kind of ['date', 'map', 'undefined', 'negative zero']) {
  try { text(kind + ' ' + JSON.stringify(await tools.value_of({ kind }))); } catch (error) { text(kind + ' refused: ' + error.message); }
}`;
    const run = async (withHooks: boolean) => {
      const hooks = withHooks ? policyHooks([]) : undefined;
      const session = defer(createSession({ toolMode: 'code-mode-only', tools: [tool], ...(hooks ? { hooks } : {}) }), (opened) => opened.shutdown());
      const result = await session.runTurn({ model: createScriptedModel([[exec('e1', cell)], [say('done')]]), input: 'values' });
      await hooks?.close();
      return texts(result.items.find((item) => item.type === 'custom_tool_call_output')).slice(1);
    };
    const expected = [
      'date {"at":"1970-01-01T00:00:00.000Z"}',
      `map refused: ${EXPECTED.map}`,
      'undefined {"kept":1,"list":[null]}',
      'negative zero {"zero":0}',
    ];
    expect(await run(false)).toEqual(expected);
    expect(await run(true)).toEqual(expected);
  });
});
