import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createHookEngine } from '@switchyard/hooks';
import { openaiResponses } from '@switchyard/openai';
import { FatalToolError, ModelRequestError, isSwitchyardError, type ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { execTools } from '@switchyard/tool-exec';

// Hostile options objects and saved histories: each is a CONFIG error (never another throw, never
// accepted silently), and a history stays valid whatever the model and the tools do.

const runs = process.env.RELIABILITY_PROFILE === 'long' ? 2_000 : 150;

function configOutcome(run: () => unknown): 'accepted' | 'config' | string {
  try {
    run();
    return 'accepted';
  } catch (error) {
    return isSwitchyardError(error) && error.code === 'CONFIG' ? 'config' : `leaked ${String(error)}`;
  }
}

const echo = defineFunctionTool({ name: 'echo', description: 'Echoes.', parameters: { type: 'object' }, handle: () => 'echoed' });
const boom = defineFunctionTool({ name: 'boom', description: 'Fatal.', parameters: { type: 'object' }, handle: () => { throw new FatalToolError('disk on fire'); } });

describe('hostile configuration', () => {
  it('throwing getters, proxies, symbols, __proto__ keys and odd values are CONFIG errors', () => {
    const hostile: Array<[string, unknown]> = [
      ['a getter that throws', Object.defineProperty({ tools: [] }, 'toolMode', { enumerable: true, get: () => { throw new Error('gotcha'); } })],
      ['a proxy whose ownKeys throws', new Proxy({ tools: [] }, { ownKeys: () => { throw new Error('no keys'); } })],
      ['a proxy whose get throws', new Proxy({ tools: [] }, { get: () => { throw new Error('no get'); } })],
      ['a JSON __proto__ key', JSON.parse('{"tools": [], "__proto__": {"strict": true}}')],
      ['a constructor key', { tools: [], constructor: 1 }],
      ['null', null],
      ['a string', 'direct'],
      ['a function', () => ({ tools: [] })],
      ['tools as a Set', { tools: new Set([echo]) }],
      ['tools with a hole', { tools: [echo, , echo] }],
      ['NaN maxSteps', { tools: [], maxSteps: Number.NaN }],
      ['Infinity retries', { tools: [], maxModelRetries: Number.POSITIVE_INFINITY }],
      ['a circular history', (() => { const item: Record<string, unknown> = { type: 'message' }; item.self = item; return { tools: [], history: [item] }; })()],
      ['a BigInt in history', { tools: [], history: [{ type: 'message', role: 'user', content: 1n }] }],
      ['an output before its call', { tools: [], history: [{ type: 'function_call_output', call_id: 'x', output: '' }, { type: 'function_call', call_id: 'x', name: 'echo', arguments: '{}' }] }],
      ['a call without call_id', { tools: [], history: [{ type: 'function_call', name: 'echo', arguments: '{}' }] }],
    ];
    const results = hostile.map(([label, options]) => [label, configOutcome(() => createSession(options as never))]);
    expect(results).toEqual(hostile.map(([label]) => [label, 'config']));
    // prototypes untouched by the __proto__ key
    expect(({} as { strict?: unknown }).strict).toBeUndefined();
    console.log(`[reliability:short] host config: ${hostile.length} hostile createSession options, all CONFIG errors`);
  });

  it('random keys and values never leak another error from any factory', () => {
    const factories: Array<[string, (options: unknown) => unknown]> = [
      ['createSession', (options) => createSession(options as never)],
      ['createHookEngine', (options) => createHookEngine(options as never)],
      ['openaiResponses', (options) => openaiResponses(options as never)],
      ['execTools', (options) => execTools(options as never)],
    ];
    const leaks: string[] = [];
    fc.assert(
      fc.property(fc.constantFrom(...factories), fc.dictionary(fc.string({ maxLength: 12 }), fc.anything({ maxDepth: 2 }), { maxKeys: 4 }), ([name, factory], options) => {
        const result = configOutcome(() => factory(options));
        if (result.startsWith('leaked')) leaks.push(`${name}(${JSON.stringify(Object.keys(options))}): ${result}`);
      }),
      { numRuns: runs },
    );
    expect(leaks).toEqual([]);
    console.log(`[reliability:short] host config: ${runs} random options objects over 4 factories, no error but CONFIG`);
  });
});

describe('history under random failures', () => {
  it('every call keeps exactly one output whatever fails, and the next request is valid', async () => {
    const step = fc.oneof(
      fc.constant<'fatal'>('fatal'),
      fc.constant<'model-error'>('model-error'),
      fc.constant<'calls'>('calls'),
      fc.constant<'answer'>('answer'),
    );
    let turns = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(step, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }), async (plans) => {
        const session = createSession({ tools: [echo, boom], maxModelRetries: 0 });
        let id = 0;
        for (const plan of plans) {
          turns++;
          const script = plan.map((kind): ResponseItem[] | Error => {
            id++;
            if (kind === 'model-error') return new ModelRequestError('down', { retryable: true, status: 503 });
            if (kind === 'fatal') return [{ type: 'function_call', call_id: `e${id}`, name: 'echo', arguments: '{}' }, { type: 'function_call', call_id: `b${id}`, name: 'boom', arguments: '{}' }];
            if (kind === 'calls') return [{ type: 'function_call', call_id: `e${id}`, name: 'echo', arguments: '{}' }];
            return [{ type: 'message', role: 'assistant', content: 'ok' }];
          });
          await session.runTurn({ model: createScriptedModel(script), input: `turn ${turns}` }).catch(() => undefined);
          const calls = session.history.filter((item) => item.type === 'function_call').map((item) => (item as { call_id: string }).call_id);
          const outputs = session.history.filter((item) => item.type === 'function_call_output').map((item) => (item as { call_id: string }).call_id);
          expect([...outputs].sort()).toEqual([...calls].sort());
          // what is saved restores
          expect(createSession({ tools: [echo], history: JSON.parse(JSON.stringify(session.history)) }).history).toEqual(session.history);
        }
        await session.shutdown();
      }),
      { numRuns: Math.max(20, runs / 5) },
    );
    console.log(`[reliability:short] history: ${turns} turns with random fatal tools, model errors and unfinished steps; every call answered once, every history restorable`);
  });
});
