import { createSession } from '@switchyard/session';
import type { ApprovalProvider, ApprovalRequest, ResponseItem } from '@switchyard/protocol';
import { jsonSchema, tool } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aiSdkTools, APPROVAL_DENIED_MESSAGE, NO_APPROVER_MESSAGE } from './tools';
import { callItem } from '@switchyard/test-helpers';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const outputBody = (item: object) => {
  const output = (item as { output?: unknown }).output;
  return typeof output === 'string' ? output : (output as Array<{ text?: string; image_url?: string }>).map((part) => part.text ?? part.image_url).join('|');
};

async function stepWith(executors: Awaited<ReturnType<typeof aiSdkTools>>, approvals?: ApprovalProvider) {
  const session = createSession({ tools: executors, ...(approvals ? { approvals } : {}) });
  const turn = session.beginTurn();
  cleanups.push(async () => {
    await turn.end();
    await session.shutdown();
  });
  return { turn, step: await turn.step() };
}

describe('aiSdkTools', () => {
  it('turns a zod schema into the JSON Schema the model sees; the registry and the AI SDK both validate', async () => {
    const executors = await aiSdkTools({
      add: tool({
        description: 'Adds two small numbers.',
        inputSchema: z.object({ a: z.number(), b: z.number().max(10, 'b must be at most 10') }),
        execute: async ({ a, b }) => ({ sum: a + b }),
      }),
    });
    expect(executors).toHaveLength(1);
    expect(executors[0]!.spec).toMatchObject({
      type: 'function',
      name: 'add',
      description: 'Adds two small numbers.',
      parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number', maximum: 10 } }, required: ['a', 'b'] },
    });
    const { step } = await stepWith(executors);
    expect(outputBody(await step.dispatch(callItem('c1', 'add', { a: 2, b: 3 })))).toBe('{"sum":5}');
    // ajv (the registry) refuses a wrong type before the handler.
    expect(outputBody(await step.dispatch(callItem('c2', 'add', { a: 'two', b: 3 })))).toMatch(/^invalid arguments for add: /);
    // The AI SDK's own validation carries the zod message.
    const refined = await aiSdkTools({
      even: tool({ inputSchema: z.object({ n: z.number().refine((n) => n % 2 === 0, 'n must be even') }), execute: async ({ n }) => n / 2 }),
    });
    const { step: second } = await stepWith(refined);
    const refusal = outputBody(await second.dispatch(callItem('c3', 'even', { n: 3 })));
    expect(refusal).toMatch(/^invalid arguments for even: /);
    expect(refusal).toContain('n must be even');
    expect(outputBody(await second.dispatch(callItem('c4', 'even', { n: 4 })))).toBe('2');
  });

  it('needsApproval asks the step approval provider; a denial or no provider is a model-visible refusal', async () => {
    const asked: ApprovalRequest[] = [];
    let answer: 'approved' | 'denied' = 'denied';
    const approvals: ApprovalProvider = {
      requestApproval: async (request) => {
        asked.push(request);
        return answer;
      },
    };
    const ran: string[] = [];
    const toolSet = {
      wipe: tool({
        description: 'Wipes a table.',
        inputSchema: jsonSchema<{ table: string }>({ type: 'object', properties: { table: { type: 'string' } }, required: ['table'] }),
        needsApproval: async ({ table }) => table !== 'scratch',
        execute: async ({ table }) => {
          ran.push(table);
          return `wiped ${table}`;
        },
      }),
    };
    const { step } = await stepWith(await aiSdkTools(toolSet, { namespace: 'db__' }), approvals);
    const wire = (id: string, table: string): ResponseItem => ({ type: 'function_call', call_id: id, name: 'wipe', namespace: 'db__', arguments: JSON.stringify({ table }) });

    expect(outputBody(await step.dispatch(wire('c1', 'scratch')))).toBe('wiped scratch');
    expect(asked).toHaveLength(0);
    expect(outputBody(await step.dispatch(wire('c2', 'users')))).toBe(`db__wipe ${APPROVAL_DENIED_MESSAGE}`);
    expect(asked[0]).toMatchObject({ kind: 'tool', toolName: 'db__wipe', callId: 'c2' });
    answer = 'approved';
    expect(outputBody(await step.dispatch(wire('c3', 'users')))).toBe('wiped users');
    expect(ran).toEqual(['scratch', 'users']);

    const { step: nobody } = await stepWith(await aiSdkTools(toolSet, { namespace: 'db__' }));
    expect(outputBody(await nobody.dispatch(wire('c4', 'users')))).toBe(`db__wipe ${NO_APPROVER_MESSAGE}`);
    expect(ran).toEqual(['scratch', 'users']);
  });

  it("carries the call's abort signal into execute", async () => {
    let sawAbort = false;
    let markStarted = () => {};
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const executors = await aiSdkTools({
      slow: tool({
        inputSchema: z.object({}),
        execute: (_input, { abortSignal }) =>
          new Promise<string>((resolve, reject) => {
            markStarted();
            const timer = setTimeout(() => resolve('finished'), 30_000);
            abortSignal?.addEventListener('abort', () => {
              sawAbort = true;
              clearTimeout(timer);
              reject(new Error('stopped'));
            });
          }),
      }),
    });
    const { turn, step } = await stepWith(executors);
    const pending = step.dispatch(callItem('c1', 'slow', {}));
    await started;
    turn.abort();
    const output = await pending;
    expect(sawAbort).toBe(true);
    expect(output.type).toBe('function_call_output');
    expect(outputBody(output)).toMatch(/aborted/);
  });

  it('a streaming execute answers with its last value; toModelOutput shapes text and images', async () => {
    const pixel = 'iVBORw0KGgo=';
    const executors = await aiSdkTools({
      progress: tool({
        inputSchema: z.object({}),
        async *execute() {
          yield 'working';
          yield 'done';
        },
      }),
      snapshot: tool({
        inputSchema: z.object({}),
        execute: async () => ({ caption: 'a chart' }),
        toModelOutput: ({ output }) => ({
          type: 'content',
          value: [
            { type: 'text', text: output.caption },
            { type: 'file', mediaType: 'image/png', data: { type: 'data', data: pixel } },
          ],
        }),
      }),
      broken: tool({ inputSchema: z.object({}), execute: async () => ({}), toModelOutput: () => ({ type: 'error-text', value: 'the chart failed' }) }),
    });
    const { step } = await stepWith(executors);
    expect(outputBody(await step.dispatch(callItem('c1', 'progress', {})))).toBe('done');
    const snapshot = await step.dispatch(callItem('c2', 'snapshot', {}));
    expect((snapshot as { output: unknown }).output).toEqual([
      { type: 'input_text', text: 'a chart' },
      { type: 'input_image', image_url: `data:image/png;base64,${pixel}` },
    ]);
    const result = await step.handleItem(callItem('c3', 'broken', {}));
    expect(result?.success).toBe(false);
    expect(outputBody(result!.item)).toBe('the chart failed');
  });

  it('refuses provider tools and tools without execute with CONFIG errors naming them', async () => {
    const providerTool = { type: 'provider', id: 'openai.web_search', args: {}, inputSchema: jsonSchema({ type: 'object' }), isProviderExecuted: true } as const;
    await expect(aiSdkTools({ web: providerTool as never })).rejects.toMatchObject({ code: 'CONFIG', message: expect.stringContaining('"web" is a provider tool (openai.web_search)') });
    await expect(aiSdkTools({ ask: tool({ inputSchema: z.object({}), outputSchema: z.string() }) as never })).rejects.toMatchObject({
      code: 'CONFIG',
      message: 'aiSdkTools: tool "ask" has no execute function',
    });
  });

  it('explains the common mistakes: a forgotten await, one tool instead of a set, a list, a misspelled option', async () => {
    const prefix = 'aiSdkTools: the tools must be an AI SDK ToolSet (an object of named tools); ';
    const weather = tool({ inputSchema: z.object({}), execute: async () => 'sunny' });
    await expect(aiSdkTools(Promise.resolve({ weather }) as never)).rejects.toMatchObject({ code: 'CONFIG', message: `${prefix}got a Promise; did you forget \`await\`?` });
    await expect(aiSdkTools(weather as never)).rejects.toMatchObject({ code: 'CONFIG', message: `${prefix}got a single tool; pass an object of named tools, e.g. \`{ weather: tool({...}) }\`` });
    await expect(aiSdkTools([weather] as never)).rejects.toMatchObject({ code: 'CONFIG', message: `${prefix}got an array; pass an object of named tools, e.g. \`{ weather: tool({...}) }\`` });
    await expect(aiSdkTools({ weather }, { namepsace: 'w__' } as never)).rejects.toMatchObject({ code: 'CONFIG', message: 'aiSdkTools: unknown option `namepsace`; did you mean `namespace`?' });
    expect(await aiSdkTools({ weather }, { namespace: 'w__', exposure: 'direct', supportsParallelToolCalls: false, context: {} })).toHaveLength(1);
  });
});
