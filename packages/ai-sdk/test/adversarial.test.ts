/**
 * The AI SDK boundary under abuse: a hostile provider stream and hostile AI SDK tools, driven
 * through a real session. What must hold: every tool call the model made is answered exactly once
 * with its call id; a provider failure is a `ModelRequestError` (or the turn's own error), never a
 * crash or an unhandled rejection; the session runs the next turn. (Listed in tools/reliability's
 * README; it lives here because the AI SDK needs Node 22+ and runs on the matrix's Node 24 pass.)
 */
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { isSwitchyardError, type ResponseItem } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { jsonSchema, tool, type ToolSet } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { aiSdkModel, aiSdkTools } from '../src/index';
import { collectUnhandledRejections } from '@switchyard/test-helpers';

const finish: LanguageModelV4StreamPart = {
  type: 'finish',
  usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
  finishReason: { unified: 'stop', raw: 'stop' },
};

const unhandled = collectUnhandledRejections();

/** Hostile values a provider may put where an error, a name or an input belongs. */
const hostile = [
  undefined,
  null,
  '',
  'plain string',
  42,
  Symbol('s'),
  { message: 7 },
  { error: { message: 'nested' } },
  Object.assign(Object.create(null), { toString: undefined }),
  {
    get message() {
      throw new Error('getter throws');
    },
  },
  (() => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    return circular;
  })(),
];

const toolInput = fc.oneof(
  fc.constant(''),
  fc.constant('null'),
  fc.constant('[]'),
  fc.constant('"just a string"'),
  fc.constant('{"code":'),
  fc.constant('{"code": 12}'),
  fc.constant('{"__proto__": {"polluted": true}, "id": 1}'),
  fc.string({ maxLength: 40 }),
  fc.json({ maxDepth: 2 }),
);
const toolNameArb = fc.oneof(fc.constantFrom('echo', 'exec', 'boom', '', ' ', '__proto__', 'constructor', 'echo\u0000', 'e'.repeat(300)), fc.string({ maxLength: 12 }));

describe('a hostile provider stream', () => {
  it('random tool calls (names, inputs, duplicates), stray parts and junk usage: every call answered once, by call id', async () => {
    const echo = await aiSdkTools({ echo: tool({ inputSchema: jsonSchema<Record<string, unknown>>({ type: 'object' }), execute: async (input) => input }) });
    const session = createSession({ tools: echo });
    let runs = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ name: toolNameArb, input: toolInput }), { minLength: 1, maxLength: 6 }),
          fc.array(fc.constantFrom<LanguageModelV4StreamPart>(
            { type: 'text-delta', id: 'nobody-started-me', delta: 'x' },
            { type: 'text-end', id: 'unknown' },
            { type: 'reasoning-delta', id: 'r?', delta: 'y' },
            { type: 'tool-input-delta', id: 'z', delta: '{' },
            { type: 'raw', rawValue: { anything: true } },
            { type: 'ping' } as never,
            { type: 'not-a-part' } as never,
          ), { maxLength: 4 }),
          async (calls, noise) => {
            runs++;
            const parts: LanguageModelV4StreamPart[] = [...noise];
            calls.forEach((call, index) => parts.push({ type: 'tool-call', toolCallId: `call-${index}`, toolName: call.name, input: call.input }));
            parts.push({ ...finish, usage: { inputTokens: { total: Number.NaN } as never, outputTokens: {} as never } }, finish, { type: 'text-delta', id: 'after', delta: 'late' });
            const model = new MockLanguageModelV4({
              doStream: [{ stream: convertArrayToReadableStream(parts) }, { stream: convertArrayToReadableStream<LanguageModelV4StreamPart>([finish]) }],
            });
            const result = await session.runTurn({ model: aiSdkModel(model), input: 'go' });
            const outputs = result.items.filter((item) => item.type.endsWith('_output')) as Array<ResponseItem & { call_id: string }>;
            expect(outputs.map((output) => output.call_id)).toEqual(calls.map((_, index) => `call-${index}`));
            expect(({} as Record<string, unknown>).polluted).toBeUndefined();
          },
        ),
        { numRuns: 40 },
      );
    } finally {
      await session.shutdown();
    }
    expect(runs).toBe(40);
    expect(unhandled).toEqual([]);
  });

  it('a provider that throws or streams hostile values fails the turn with a Switchyard error; the next turn works', async () => {
    const session = createSession({ tools: [] });
    try {
      for (const value of hostile) {
        for (const where of ['doStream', 'error-part', 'stream-error'] as const) {
          const model = new MockLanguageModelV4({
            doStream: async () => {
              if (where === 'doStream') throw value;
              return {
                stream:
                  where === 'error-part'
                    ? convertArrayToReadableStream<LanguageModelV4StreamPart>([{ type: 'error', error: value }])
                    : new ReadableStream<LanguageModelV4StreamPart>({
                        pull(controller) {
                          controller.error(value);
                        },
                      }),
              };
            },
          });
          const failure = await session.runTurn({ model: aiSdkModel(model), input: 'go' }).then(
            () => undefined,
            (error: unknown) => error,
          );
          expect(isSwitchyardError(failure), `${where} with ${String(typeof value)}`).toBe(true);
          expect(typeof (failure as Error).message).toBe('string');
        }
      }
      const ok = new MockLanguageModelV4({ doStream: [{ stream: convertArrayToReadableStream<LanguageModelV4StreamPart>([{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'fine' }, finish]) }] });
      expect((await session.runTurn({ model: aiSdkModel(ok), input: 'again' })).finalText).toBe('fine');
    } finally {
      await session.shutdown();
    }
    expect(unhandled).toEqual([]);
  });
});

describe('hostile AI SDK tools', () => {
  it('throwing non-errors, unserializable results, failing streams, approval and toModelOutput faults: failed outputs, once each', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const schema = jsonSchema<Record<string, unknown>>({ type: 'object' });
    const behaviours: Record<string, () => unknown> = {
      throws_string: () => {
        throw 'a string';
      },
      throws_null: () => {
        throw null;
      },
      throws_symbol: () => {
        throw Symbol('s');
      },
      rejects_object: () => Promise.reject({ weird: true }),
      returns_undefined: () => undefined,
      returns_circular: () => circular,
      returns_bigint: () => 10n,
      returns_function: () => () => 1,
    };
    const toolSet: ToolSet = {};
    for (const [name, behave] of Object.entries(behaviours)) toolSet[name] = tool({ inputSchema: schema, execute: async (): Promise<unknown> => behave() });
    toolSet.stream_fails = tool({
      inputSchema: schema,
      async *execute() {
        yield 'first';
        throw new Error('stream broke');
      },
    });
    toolSet.approval_throws = tool({
      inputSchema: schema,
      needsApproval: () => {
        throw new Error('approval check broke');
      },
      execute: async () => 'ran',
    });
    toolSet.model_output_throws = tool({
      inputSchema: schema,
      execute: async () => 'ok',
      toModelOutput: () => {
        throw new Error('cannot shape');
      },
    });
    toolSet.model_output_garbage = tool({ inputSchema: schema, execute: async () => 'ok', toModelOutput: () => ({ type: 'no-such-type' }) as never });
    const session = createSession({ tools: await aiSdkTools(toolSet) });
    const turn = session.beginTurn();
    try {
      const step = await turn.step();
      const names = Object.keys(toolSet);
      const results = await Promise.all(names.map((name, index) => step.handleItem({ type: 'function_call', call_id: `c${index}`, name, arguments: '{}' })));
      const byName = Object.fromEntries(names.map((name, index) => [name, results[index]!]));
      results.forEach((result, index) => expect(result?.item.call_id).toBe(`c${index}`));
      for (const name of ['throws_string', 'throws_null', 'throws_symbol', 'rejects_object', 'returns_circular', 'returns_bigint', 'stream_fails', 'approval_throws', 'model_output_throws']) {
        expect(byName[name]!.success, name).toBe(false);
      }
      expect(byName.returns_undefined!.success).toBe(true);
      expect((byName.returns_undefined!.item as { output: string }).output).toBe('null');
    } finally {
      await turn.end();
      await session.shutdown();
    }
    expect(unhandled).toEqual([]);
  });

  it('a schema whose JSON Schema cannot be produced is refused when the executors are built', async () => {
    const broken = jsonSchema(() => Promise.reject(new Error('no schema today')));
    await expect(aiSdkTools({ bad: tool({ inputSchema: broken, execute: async () => 'x' }) })).rejects.toMatchObject({ code: 'CONFIG', message: expect.stringContaining('"bad"') });
  });
});
