import { defineFunctionTool } from '@switchyard/kit';
import type { ResponseItem } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { readUIMessageStream, safeValidateUIMessages } from 'ai';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { historyToUIMessages, toUIMessageStream, uiMessagesToHistory, type SwitchyardUIMessage } from './index';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function expectValidUIMessages(messages: SwitchyardUIMessage[]): Promise<void> {
  const validated = await safeValidateUIMessages({ messages });
  if (!validated.success) throw validated.error;
}

/** Round trip through storage as a host would: JSON text in between. */
const roundTrip = (history: readonly ResponseItem[]) => uiMessagesToHistory(JSON.parse(JSON.stringify(historyToUIMessages(history))));

describe('history ↔ UI messages', () => {
  it("a real session's history (Code Mode, notify, a background result, hook context) round-trips item for item", async () => {
    const stock = defineFunctionTool({ name: 'stock', description: 'Stock.', parameters: { type: 'object', properties: { sku: { type: 'string' } } }, handle: () => ({ units: 3 }) });
    const session = createSession({ toolMode: 'code-mode', tools: [stock], background: true });
    cleanups.push(() => session.shutdown());
    const cell = "notify('counting');\nconst s = await tools.stock({ sku: 'a' });\ntext('units ' + s.units);\nyield_control();\nawait new Promise((r) => setTimeout(r, 200));\ntext('later');";
    const done = new Promise((resolve) => session.on('background-complete', resolve));
    await session.runTurn({
      model: createScriptedModel([
        [
          { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Count first.' }], encrypted_content: 'gAAA', provider_metadata: { openai: { itemId: 'rs_1' } } },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Counting.' }], provider_metadata: { anthropic: { signature: 'sig' } } },
          { type: 'function_call', call_id: 'f-1', name: 'stock', arguments: '{ "sku" : "b" }' },
          { type: 'custom_tool_call', call_id: 'c-1', name: 'exec', input: cell },
        ],
        [{ type: 'message', role: 'assistant', content: 'Started.' }],
      ]),
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'count' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' }] }],
    });
    await done;
    await session.runTurn({ model: createScriptedModel([[{ type: 'message', role: 'assistant', content: 'The count is done.' }]]), input: 'and?' });
    const history = [...session.history, { type: 'message', role: 'developer', content: '<hook_context>ok</hook_context>' } as ResponseItem];
    const messages = historyToUIMessages(history);
    await expectValidUIMessages(messages);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    const first = messages[1];
    expect(first.parts.map((part) => part.type)).toEqual(['reasoning', 'text', 'tool-stock', 'tool-exec', 'data-switchyard-item', 'text']);
    expect(first.parts.find((part) => part.type === 'tool-exec')).toMatchObject({ state: 'output-available', input: cell });
    expect(first.parts.find((part) => part.type === 'tool-stock')).toMatchObject({ state: 'output-available', input: { sku: 'b' }, output: '{"units":3}' });
    expect(roundTrip(history)).toEqual(history);
  }, 20_000);

  it('a turn the session ran itself (a wake turn) is its own message when the turn is named', () => {
    const history: ResponseItem[] = [
      { type: 'message', role: 'user', content: 'go' },
      { type: 'custom_tool_call', call_id: 'c-1', name: 'exec', input: 'yield_control()' },
      { type: 'custom_tool_call_output', call_id: 'c-1', output: 'Script running with cell ID abc' },
      { type: 'message', role: 'assistant', content: 'running' },
      { type: 'custom_tool_call_output', call_id: 'c-1', output: 'Script completed' },
      { type: 'message', role: 'assistant', content: 'it finished' },
    ];
    const merged = historyToUIMessages(history);
    expect(merged.map((message) => message.id)).toEqual(['msg-0', 'msg-1']);
    const named = historyToUIMessages(history, { turns: [{ start: 4, messageId: 'turn-wake' }] });
    expect(named.map((message) => message.id)).toEqual(['msg-0', 'msg-1', 'turn-wake']);
    expect(named[2].parts.map((part) => part.type)).toEqual(['data-switchyard-item', 'text']);
    expect(uiMessagesToHistory(named)).toEqual(history);
  });

  it('any history of the shapes a session records round-trips, and its messages are valid UI messages', async () => {
    const text = fc.string({ maxLength: 12 });
    const id = fc.stringMatching(/^[a-z0-9]{1,6}$/);
    const json = fc.dictionary(fc.stringMatching(/^[a-z]{1,4}$/), fc.oneof(fc.integer(), text, fc.boolean()), { maxKeys: 3 });
    const metadata = fc.option(fc.record({ openai: fc.record({ itemId: id }) }), { nil: undefined });
    const body = fc.oneof(text, fc.array(fc.record({ type: fc.constant('input_text' as const), text }), { minLength: 1, maxLength: 2 }));
    const assistantMessage = fc.oneof(
      text.map((content) => ({ type: 'message', role: 'assistant', content })),
      fc.tuple(fc.array(text, { minLength: 1, maxLength: 3 }), metadata, fc.option(id, { nil: undefined })).map(([texts, provider, itemId]) => ({
        type: 'message',
        role: 'assistant',
        content: texts.map((part) => ({ type: 'output_text', text: part })),
        ...(itemId ? { id: itemId } : {}),
        ...(provider ? { provider_metadata: provider } : {}),
      })),
      text.map((refusal) => ({ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal }] })),
    );
    const step = fc
      .tuple(
        fc.option(text.map((summary) => ({ type: 'reasoning', id: 'rs', summary: [{ type: 'summary_text', text: summary }], encrypted_content: 'x' })), { nil: undefined }),
        fc.option(assistantMessage, { nil: undefined }),
        fc.array(fc.tuple(fc.boolean(), json, fc.boolean(), fc.option(fc.stringMatching(/^[a-z]{1,5}$/), { nil: undefined }), body), { maxLength: 3 }),
        fc.boolean(),
      )
      .map(([reasoning, message, calls, notify]) => ({ reasoning, message, calls, notify }));
    const turn = fc.tuple(fc.oneof(text, fc.constant(undefined)), fc.array(step, { minLength: 1, maxLength: 3 }), fc.boolean());
    let counter = 0;
    const histories = fc.array(turn, { minLength: 1, maxLength: 3 }).map((turns) => {
      const items: ResponseItem[] = [];
      for (const [input, steps, developer] of turns) {
        if (input !== undefined) items.push({ type: 'message', role: 'user', content: input });
        for (const { reasoning, message, calls, notify } of steps) {
          if (reasoning) items.push(reasoning as ResponseItem);
          if (message) items.push(message as ResponseItem);
          const made = calls.map(([custom, args, spaced, namespace, output]) => {
            const call_id = `call-${++counter}`;
            const argumentsText = spaced ? JSON.stringify(args, null, 1) : JSON.stringify(args);
            const item = custom
              ? { type: 'custom_tool_call', call_id, name: 'exec', input: `text(${JSON.stringify(args)})` }
              : { type: 'function_call', call_id, name: 'tool', ...(namespace ? { namespace } : {}), arguments: argumentsText };
            return { item, output: { type: custom ? 'custom_tool_call_output' : 'function_call_output', call_id, output } };
          });
          items.push(...(made.map((call) => call.item) as ResponseItem[]), ...(made.map((call) => call.output) as ResponseItem[]));
          const custom = made.find((call) => call.item.type === 'custom_tool_call');
          if (notify && custom) items.push({ type: 'custom_tool_call_output', call_id: custom.item.call_id, output: [{ type: 'input_text', text: 'note' }] });
          if (developer) items.push({ type: 'message', role: 'developer', content: '<hook_context>c</hook_context>' });
        }
        items.push({ type: 'web_search_call', id: 'ws', status: 'completed' } as ResponseItem);
      }
      return items;
    });
    await fc.assert(
      fc.asyncProperty(histories, async (history) => {
        await expectValidUIMessages(historyToUIMessages(history));
        expect(roundTrip(history)).toEqual(history);
      }),
      { numRuns: 150 },
    );
  });

  it("a streamed message converts to items the session accepts as history (a page's own persistence)", async () => {
    const stock = defineFunctionTool({ name: 'stock', description: 'Stock.', parameters: { type: 'object', properties: {} }, handle: () => 'three' });
    const session = createSession({ tools: [stock] });
    cleanups.push(() => session.shutdown());
    const model = createScriptedModel([[{ type: 'function_call', call_id: 'f-1', name: 'stock', arguments: '{}' }], [{ type: 'message', role: 'assistant', content: 'Three.' }]], { textDeltas: true });
    let streamed: SwitchyardUIMessage | undefined;
    for await (const message of readUIMessageStream<SwitchyardUIMessage>({ stream: toUIMessageStream(session.streamTurn({ model, input: 'how many?' })) })) streamed = message;
    const items = uiMessagesToHistory([{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'how many?' }] }, streamed!]);
    expect(items).toEqual(session.history);
    const continued = createSession({ tools: [stock], history: items });
    cleanups.push(() => continued.shutdown());
    expect(continued.history).toEqual(session.history);
  });
});
