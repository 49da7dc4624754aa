import { afterEach, describe, expect, it, vi } from 'vitest';
import { toolName, type JsonValue, type ToolExecutor } from '@switchyard/protocol';
import { JsonToolOutput, defineFunctionTool } from '@switchyard/kit';
import { invocationArguments } from '@switchyard/kit/internal';
import { invokeTool } from '../src/testing/index';

const ARGUMENTS = '{"city":"Oslo","days":3}';

/** Counts the `JSON.parse` calls on exactly this text while `run` runs. */
async function parsesOf(text: string, run: () => Promise<unknown>): Promise<number> {
  const parse = JSON.parse;
  let count = 0;
  const spy = vi.spyOn(JSON, 'parse').mockImplementation((source: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    if (source === text) count++;
    return parse(source, reviver);
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return count;
}

function forecastTool(seen: Array<{ args: JsonValue | undefined; payload: string }>): ToolExecutor {
  return defineFunctionTool({
    name: 'forecast',
    description: 'A forecast.',
    parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'], additionalProperties: false },
    handle: ({ args, invocation }) => {
      // What the handler was given, before it changes its own value below.
      seen.push({ args: structuredClone(invocation.args), payload: invocation.payload.kind === 'function' ? invocation.payload.arguments : '' });
      // A handler owns its arguments: changing them must not change what PostToolUse hooks see.
      (args as { city: string }).city = 'changed by the handler';
      return { ok: true };
    },
  });
}

afterEach(() => vi.restoreAllMocks());

describe('a function call’s arguments are parsed once', () => {
  it('the registry parses while validating and hands the value to the handler', async () => {
    const seen: Array<{ args: JsonValue | undefined; payload: string }> = [];
    const tool = forecastTool(seen);
    // Validation and the handler share one parse; each hook input is a parse of its own, so a
    // hook runner cannot change the handler's arguments behind the registry's back.
    expect(await parsesOf(ARGUMENTS, () => invokeTool(tool, ARGUMENTS))).toBe(3);
    // Without hooks the validation parse is the only one.
    expect(await parsesOf(ARGUMENTS, () => invokeTool(tool, ARGUMENTS, { hooks: false }))).toBe(1);
    expect(seen[0]!.payload).toBe(ARGUMENTS);
  });

  it('hooks see the arguments the model sent, before and after a handler that changes its own value', async () => {
    const seen: Array<{ args: JsonValue | undefined; payload: string }> = [];
    const result = await invokeTool(forecastTool(seen), ARGUMENTS);
    expect(result.item).toMatchObject({ type: 'function_call_output', output: '{"ok":true}' });
    expect(result.hookInputs.pre.map((request) => request.toolInput)).toEqual([{ city: 'Oslo', days: 3 }]);
    expect(result.hookInputs.post.map((request) => request.toolInput)).toEqual([{ city: 'Oslo', days: 3 }]);
    expect(seen[0]!.args).toEqual({ city: 'Oslo', days: 3 });
  });

  it('after a PreToolUse rewrite the handler gets the rewritten arguments, parsed and validated again', async () => {
    const seen: Array<{ args: JsonValue | undefined; payload: string }> = [];
    const tool = forecastTool(seen);
    const rewriting = {
      runPreToolUse: async () => ({ blocked: false, updatedInput: { city: 'Bergen' }, additionalContexts: [] }),
      runPostToolUse: async () => ({ additionalContexts: [] }),
    };
    await invokeTool(tool, ARGUMENTS, { hooks: rewriting });
    expect(seen.map((entry) => entry.payload)).toEqual(['{"city":"Bergen"}']);
    expect(seen[0]!.args).toEqual({ city: 'Bergen' });

    const invalid = { ...rewriting, runPreToolUse: async () => ({ blocked: false, updatedInput: { city: 7 }, additionalContexts: [] }) };
    const refused = await invokeTool(tool, ARGUMENTS, { hooks: invalid });
    expect(refused.item).toMatchObject({ output: 'invalid arguments for forecast: arguments.city must be string' });
    expect(seen).toHaveLength(1);
  });

  it('a hook runner that changes its input changes nothing the handler gets', async () => {
    const seen: Array<{ args: JsonValue | undefined; payload: string }> = [];
    const meddling = {
      runPreToolUse: async (request: { toolInput: JsonValue }) => {
        (request.toolInput as { city: string }).city = 'Atlantis';
        return { blocked: false, additionalContexts: [] };
      },
      runPostToolUse: async () => ({ additionalContexts: [] }),
    };
    await invokeTool(forecastTool(seen), ARGUMENTS, { hooks: meddling });
    expect(seen[0]!.payload).toBe(ARGUMENTS);
    expect(seen[0]!.args).toEqual({ city: 'Oslo', days: 3 });
  });

  it('an executor that skips validation gets no args and parses the payload itself through invocationArguments', async () => {
    const hadArgs: boolean[] = [];
    const raw: ToolExecutor = {
      name: toolName('raw'),
      spec: { type: 'function', name: 'raw', description: 'Raw.', strict: false, parameters: { type: 'object', properties: {} } },
      skipInputValidation: true,
      handle: async (invocation) => {
        hadArgs.push('args' in invocation);
        return new JsonToolOutput({ echoed: invocationArguments(invocation, 'raw') });
      },
    };
    const result = await invokeTool(raw, '{"any":[1,2]}', { hooks: false });
    expect(result.item).toMatchObject({ output: '{"echoed":{"any":[1,2]}}' });
    expect(hadArgs).toEqual([false]);
    const notObject = await invokeTool(raw, '[1]', { hooks: false });
    expect(notObject.item).toMatchObject({ output: 'failed to parse function arguments: expected a JSON object' });
  });
});
