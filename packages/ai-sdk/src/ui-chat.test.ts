import { parseJsonEventStream } from '@ai-sdk/provider-utils';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession, type Session } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  uiMessageChunkSchema,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  type UIMessageChunk,
} from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { say, slowTool } from '../test/ui-fixtures';
import { createUIApprovals, createUIChat, type SwitchyardUIMessage, type UIApprovals, type UIChat } from './index';
import { until } from '@switchyard/test-helpers';

/** The smallest framework-free `Chat`: the AI SDK's `AbstractChat` over plain state (what a page without React uses). */
class PlainChat extends AbstractChat<SwitchyardUIMessage> {
  constructor(init: ChatInit<SwitchyardUIMessage>) {
    let messages = init.messages ?? [];
    const state: ChatState<SwitchyardUIMessage> = {
      status: 'ready' as ChatStatus,
      error: undefined,
      get messages() {
        return messages;
      },
      set messages(next) {
        messages = next;
      },
      pushMessage: (message) => void (messages = [...messages, message]),
      popMessage: () => void (messages = messages.slice(0, -1)),
      replaceMessage: (index, message) => void (messages = messages.map((old, at) => (at === index ? message : old))),
      snapshot: (value) => structuredClone(value),
    };
    super({ ...init, state });
  }
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const API = 'http://chat.test/api/chat';

/** A page and its server in one process: the transport's requests go to the chat's handlers; every chunk it reads is kept. */
function connectPage(chat: UIChat, options: { sendAutomatically?: boolean; messages?: SwitchyardUIMessage[]; followAfter?: () => string | undefined } = {}) {
  const chunks: UIMessageChunk[][] = [];
  const statuses: number[] = [];
  const transport = new DefaultChatTransport<SwitchyardUIMessage>({
    api: API,
    fetch: async (input, init) => {
      const request = new Request(input as string, init);
      const response = request.method === 'POST' ? await chat.post(request) : await chat.follow(request);
      statuses.push(response.status);
      if (!response.body || response.status !== 200) return response;
      const [mine, theirs] = response.body.tee();
      const seen: UIMessageChunk[] = [];
      chunks.push(seen);
      void (async () => {
        for await (const parsed of parseJsonEventStream({ stream: mine, schema: uiMessageChunkSchema })) {
          if (!parsed.success) throw parsed.error;
          seen.push(parsed.value);
        }
      })();
      return new Response(theirs, { status: response.status, headers: response.headers });
    },
    prepareReconnectToStreamRequest: ({ api, id }) => {
      const after = options.followAfter?.();
      return { api: `${api}/${id}/stream?wait=3000${after ? `&after=${encodeURIComponent(after)}` : ''}` };
    },
  });
  const page = new PlainChat({
    id: 'chat-1',
    transport,
    messages: options.messages,
    ...(options.sendAutomatically === false ? {} : { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses }),
  });
  cleanups.push(() => page.stop());
  return { page, chunks, statuses };
}

/** A refund tool that asks first; `refunds` records the orders it refunded. */
function refundTool(refunds: number[], namespace?: string) {
  return defineFunctionTool<{ order: number }>({
    name: 'refund',
    ...(namespace ? { namespace } : {}),
    description: 'Refunds an order.',
    parameters: { type: 'object', properties: { order: { type: 'number' } }, required: ['order'] },
    needsApproval: true,
    supportsParallelToolCalls: true,
    handle: ({ args }) => {
      refunds.push(args.order);
      return { refunded: args.order };
    },
  });
}

function refundSetup(approvals: UIApprovals) {
  const refunds: number[] = [];
  const session = createSession({ tools: [refundTool(refunds, 'billing')], approvals });
  const model = createScriptedModel((request) => {
    const last = request.input.at(-1)!;
    if (last.type === 'function_call_output') return [say(`The refund said: ${JSON.stringify((last as { output: unknown }).output)}`)];
    return [{ type: 'function_call', call_id: `refund-${request.input.length}`, name: 'refund', namespace: 'billing', arguments: '{"order":7}' }];
  });
  const chat = createUIChat({ session, model, approvals });
  cleanups.push(() => session.shutdown(), () => chat.close());
  return { session, chat, refunds, model };
}

const refundPart = (page: PlainChat) => page.lastMessage?.parts.find((part) => part.type === 'tool-billing__refund') as
  | { state: string; approval?: { id: string; approved?: boolean; reason?: string }; output?: unknown; toolCallId: string }
  | undefined;

/** A code-mode-only session whose model runs `cell` (call id `cell-1`), then says `answer`; refunds need approval. */
function refundCellChat(cell: string, answer: string) {
  const approvals = createUIApprovals();
  const refunds: number[] = [];
  const session = createSession({ toolMode: 'code-mode-only', tools: [refundTool(refunds)], approvals });
  const model = createScriptedModel([[{ type: 'custom_tool_call', call_id: 'cell-1', name: 'exec', input: cell }], [say(answer)]]);
  const chat = createUIChat({ session, model, approvals });
  cleanups.push(() => session.shutdown(), () => chat.close());
  return { approvals, refunds, chat };
}

describe('createUIChat: approvals in the page', () => {
  it("request chunk → the page's answer (as Chat sends it) → the tool runs once", async () => {
    const approvals = createUIApprovals();
    const { session, chat, refunds } = refundSetup(approvals);
    const { page, chunks } = connectPage(chat);
    await page.sendMessage({ text: 'refund order 7' });
    expect(page.status).toBe('ready');
    const request = chunks[0].find((chunk) => chunk.type === 'tool-approval-request') as { approvalId: string; toolCallId: string; approvalDescriptor: unknown };
    expect(request).toMatchObject({ toolCallId: expect.stringMatching(/^refund-/), approvalDescriptor: { kind: 'tool', toolName: 'billing__refund', input: { order: 7 } } });
    // the response ended where the turn waits: nothing ran, the session's request waits
    expect(chunks[0].at(-1)).toEqual({ type: 'finish', finishReason: 'tool-calls' });
    expect(refunds).toEqual([]);
    expect(approvals.pending.map((pending) => pending.approvalId)).toEqual([request.approvalId]);
    expect(refundPart(page)).toMatchObject({ state: 'approval-requested', approval: { id: request.approvalId } });

    await page.addToolApprovalResponse({ id: request.approvalId, approved: true });
    await until(() => page.status === 'ready' && refundPart(page)?.state === 'output-available' && page.lastMessage!.parts.some((part) => part.type === 'text'), 'the turn to finish');
    expect(refunds).toEqual([7]);
    expect(refundPart(page)).toMatchObject({ state: 'output-available', output: '{"refunded":7}' });
    // one assistant message, continued by the answer's response
    expect(page.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(page.lastMessage!.parts.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text)).toEqual(['The refund said: "{\\"refunded\\":7}"']);
    expect(chunks[1][0]).toEqual({ type: 'start', messageId: page.lastMessage!.id });
    expect(session.history.at(-1)).toEqual(say('The refund said: "{\\"refunded\\":7}"'));
  });

  it('a denial: the tool does not run and the part is denied', async () => {
    const approvals = createUIApprovals();
    const { chat, refunds, session } = refundSetup(approvals);
    const { page } = connectPage(chat);
    await page.sendMessage({ text: 'refund order 7' });
    await page.addToolApprovalResponse({ id: refundPart(page)!.approval!.id, approved: false, reason: 'not this one' });
    await until(() => page.status === 'ready' && refundPart(page)?.state === 'output-denied', 'the denial');
    expect(refunds).toEqual([]);
    expect(session.history).toContainEqual({ type: 'function_call_output', call_id: refundPart(page)!.toolCallId, output: 'billing__refund rejected by user' });
  });

  it('an approval nobody answers times out as denied; a follower sees how it ended', async () => {
    const approvals = createUIApprovals({ timeoutMs: 300 });
    const { chat, refunds, session } = refundSetup(approvals);
    const { page } = connectPage(chat, { followAfter: () => page.lastMessage?.id });
    await page.sendMessage({ text: 'refund order 7' });
    expect(refundPart(page)?.state).toBe('approval-requested');
    const ended = new Promise((resolve) => session.on('turn-end', resolve));
    await page.resumeStream();
    await ended;
    expect(refunds).toEqual([]);
    expect(refundPart(page)).toMatchObject({ state: 'output-denied', approval: { approved: false, reason: 'no answer within 300 ms: denied' } });
    expect(page.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    // a late answer changes nothing and is told so by the stream
    expect(approvals.answer({ approvalId: refundPart(page)!.approval!.id, approved: true })).toBe('settled');
  });

  it("a nested call's approval rides on its cell's exec part; the answer lets the cell go on", async () => {
    const { refunds, chat } = refundCellChat("const r = await tools.refund({ order: 9 });\ntext('refunded ' + r.refunded);", 'Refunded.');
    const { page } = connectPage(chat);
    await page.sendMessage({ text: 'refund order 9' });
    const exec = () => page.lastMessage!.parts.find((part) => part.type === 'tool-exec') as { state: string; approval?: { id: string; descriptor?: unknown; requestReason?: string }; output?: unknown };
    expect(exec()).toMatchObject({ state: 'approval-requested', approval: { descriptor: { kind: 'tool', toolName: 'refund', input: { order: 9 }, nested: true }, requestReason: 'refund (called by the cell) needs approval' } });
    const nested = () => page.lastMessage!.parts.find((part) => part.type === 'data-switchyard-call')!.data;
    expect(nested()).toMatchObject({ toolName: 'refund', status: 'approval-requested', approvalId: exec().approval!.id, execCallId: 'cell-1' });
    expect(refunds).toEqual([]);
    await page.addToolApprovalResponse({ id: exec().approval!.id, approved: true });
    await until(() => page.status === 'ready' && exec().state === 'output-available' && page.lastMessage!.parts.some((part) => part.type === 'text'), 'the cell to finish');
    expect(refunds).toEqual([9]);
    expect(JSON.stringify(exec().output)).toContain('refunded 9');
    expect(nested()).toMatchObject({ status: 'completed' });
  }, 20_000);
  it('two nested calls of one cell wait at once: the second gets a part of its own, each is answered and runs once', async () => {
    const { refunds, chat } = refundCellChat("const all = await Promise.all([1, 2].map((order) => tools.refund({ order })));\ntext('refunded ' + all.map((r) => r.refunded).join(' and '));", 'Both refunded.');
    const { page, chunks } = connectPage(chat);
    await page.sendMessage({ text: 'refund orders 1 and 2' });
    const waiting = () => page.lastMessage!.parts.filter((part) => 'toolCallId' in part && part.state === 'approval-requested') as Array<{ type: string; approval: { id: string } }>;
    const exec = () => page.lastMessage!.parts.find((part) => part.type === 'tool-exec') as { state: string; output?: unknown };
    const shown = new Set<string>();
    // the page answers what it is asked, as it is asked (the second request may come in the answer's response)
    await until(() => {
      for (const part of waiting()) shown.add(part.type);
      if (page.status === 'ready' && waiting().length > 0) for (const part of waiting()) void page.addToolApprovalResponse({ id: part.approval.id, approved: true });
      return page.status === 'ready' && exec().state === 'output-available' && page.lastMessage!.parts.some((part) => part.type === 'text');
    }, 'both refunds');
    expect([...shown].sort()).toEqual(['tool-exec', 'tool-refund']);
    expect(chunks.flat().filter((chunk) => chunk.type === 'tool-approval-request')).toHaveLength(2);
    expect(refunds.sort()).toEqual([1, 2]);
    expect(JSON.stringify(exec().output)).toContain('refunded 1 and 2');
    expect(page.lastMessage!.parts.find((part) => part.type === 'tool-refund')).toMatchObject({ state: 'output-available' });
  }, 20_000);
});

describe('createUIChat: background results reach the page, once', () => {
  it("a wake turn's result is followed by the page and shown once; a reload has the same ids", async () => {
    const session = createSession({ toolMode: 'code-mode-only', tools: [], background: true });
    const cell = "yield_control();\nawait new Promise((resolve) => setTimeout(resolve, 300));\ntext('report: 42 rows');";
    const model = createScriptedModel((request) => {
      const last = request.input.at(-1) as { type: string; role?: string; output?: Array<{ text: string }> };
      if (last.type === 'message' && last.role === 'user') return [{ type: 'custom_tool_call', call_id: 'cell-1', name: 'exec', input: cell }];
      const text = JSON.stringify(last.output ?? '');
      return [say(text.includes('Script running') ? 'The report runs in the background.' : `Done: ${text.includes('42 rows') ? '42 rows' : '?'}`)];
    });
    const chat = createUIChat({ session, model });
    cleanups.push(() => session.shutdown(), () => chat.close());
    const stopWaking = session.wake({ model });
    cleanups.push(stopWaking);
    const { page, statuses } = connectPage(chat, { followAfter: () => page.lastMessage?.id });
    await page.sendMessage({ text: 'run the nightly report' });
    expect(page.messages).toHaveLength(2);
    await page.resumeStream();
    expect(page.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'assistant']);
    const woken = page.lastMessage!;
    const background = woken.parts.find((part) => part.type === 'data-switchyard-background');
    expect(background?.data).toMatchObject({ callId: 'cell-1', status: 'completed', item: { type: 'custom_tool_call_output', call_id: 'cell-1' } });
    expect(JSON.stringify(background?.data.item)).toContain('report: 42 rows');
    expect(woken.parts.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text)).toEqual(['Done: 42 rows']);
    // following again: nothing new (204 after the wait), and nothing shown twice
    await page.resumeStream();
    expect(statuses.at(-1)).toBe(204);
    expect(page.messages).toHaveLength(3);
    // a page loading the conversation gets the ids it followed
    const loaded = chat.messages();
    expect(loaded.map((message) => message.id).slice(1)).toEqual(page.messages.slice(1).map((message) => message.id));
    expect(loaded[2].parts.find((part) => part.type === 'data-switchyard-item' || part.type === 'text')).toBeDefined();
  }, 20_000);
});

describe('createUIChat: bad input is a clear HTTP error, and the session loses nothing', () => {
  const post = (chat: UIChat, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) => chat.post(new Request(API, { method: 'POST', headers, body }));
  const user = (text: string, id = 'u1') => ({ id, role: 'user', parts: [{ type: 'text', text }] });

  function plainSetup() {
    const approvals = createUIApprovals();
    const { session, chat, refunds } = refundSetup(approvals);
    return { session, chat, refunds, approvals };
  }

  it('malformed requests: 4xx with the reason, nothing recorded', async () => {
    const { session, chat } = plainSetup();
    const cases: Array<[Response | Promise<Response>, number, RegExp]> = [
      [post(chat, '{"messages": [', { 'content-type': 'application/json' }), 400, /^the request body is not JSON: /],
      [post(chat, JSON.stringify({ messages: 'hello' })), 400, /^`messages` must be a non-empty list/],
      [post(chat, JSON.stringify({ messages: [] })), 400, /^`messages` must be a non-empty list/],
      [post(chat, JSON.stringify([user('x')])), 400, /^the request body must be an object/],
      [post(chat, JSON.stringify({ messages: [{ id: 'u1', role: 'robot', parts: [] }] })), 400, /^invalid `messages`: /],
      [post(chat, JSON.stringify({ messages: [{ id: 'u1', role: 'user', parts: [{ type: 'bogus' }] }] })), 400, /^invalid `messages`: /],
      [post(chat, JSON.stringify({ messages: [user('x')] }), { 'content-type': 'text/plain' }), 415, /^a chat request's body is JSON/],
      [post(chat, JSON.stringify({ messages: [user('x'.repeat(5 * 1024 * 1024))] })), 413, /^the request body is over 4194304 bytes$/],
      [post(chat, JSON.stringify({ messages: [user('x')], trigger: 'regenerate-message' })), 400, /^trigger `regenerate-message` is not supported/],
      [post(chat, JSON.stringify({ messages: [{ id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] }] })), 400, /without approval answers: nothing to do/],
      [post(chat, JSON.stringify({ messages: [{ id: 'u1', role: 'user', parts: [{ type: 'file', mediaType: 'application/pdf', url: 'data:application/pdf;base64,AA==' }] }] })), 400, /has no text or image/],
      [chat.post(new Request(API, { method: 'GET' })), 405, /^a chat request is a POST; got GET$/],
    ];
    for (const [pending, status, message] of cases) {
      const response = await pending;
      expect(response.status).toBe(status);
      expect(await response.text()).toMatch(message);
    }
    expect(session.history).toEqual([]);
  });

  it('an approval for an unknown call, or paired with another call, is refused; the waiting approval still works', async () => {
    const { chat, refunds, approvals } = plainSetup();
    const { page } = connectPage(chat, { sendAutomatically: false });
    await page.sendMessage({ text: 'refund order 7' });
    const part = refundPart(page)!;
    const answered = (approvalId: string, toolCallId: string) => ({
      messages: [user('refund order 7'), { id: page.lastMessage!.id, role: 'assistant', parts: [{ type: 'tool-billing__refund', toolCallId, state: 'approval-responded', input: { order: 7 }, approval: { id: approvalId, approved: true } }] }],
    });
    const unknown = await post(chat, JSON.stringify(answered('approval-forged', part.toolCallId)));
    expect([unknown.status, await unknown.text()]).toEqual([400, 'unknown approval `approval-forged`: no call of this chat waits for it']);
    const mispaired = await post(chat, JSON.stringify(answered(part.approval!.id, 'refund-999')));
    expect([mispaired.status, await mispaired.text()]).toEqual([400, `approval \`${part.approval!.id}\` belongs to call \`${part.toolCallId}\`, not \`refund-999\``]);
    expect(refunds).toEqual([]);
    expect(approvals.pending).toHaveLength(1);
    // a new message while the turn waits is refused: one turn at a time
    const busy = await post(chat, JSON.stringify({ messages: [user('refund order 8', 'u2')] }));
    expect(busy.status).toBe(409);
    await page.addToolApprovalResponse({ id: part.approval!.id, approved: true });
    await page.sendMessage();
    await until(() => refundPart(page)?.state === 'output-available', 'the approved refund');
    expect(refunds).toEqual([7]);
  });

  it('a client that disconnects mid-stream: the turn finishes, its result is in the history and in the chat', async () => {
    const slow = slowTool(200);
    const session: Session = createSession({ tools: [slow] });
    const model = createScriptedModel([[{ type: 'function_call', call_id: 's-1', name: 'slow', arguments: '{}' }], [say('finished anyway')]]);
    const chat = createUIChat({ session, model });
    cleanups.push(() => session.shutdown(), () => chat.close());
    const ended = new Promise((resolve) => session.on('turn-end', resolve));
    const response = await post(chat, JSON.stringify({ messages: [user('go')] }));
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const messageId = /"messageId":"([^"]+)"/.exec(first)![1];
    await reader.cancel();
    // a page that comes back while the turn runs follows it: the turn again, whole, to its end
    const { page } = connectPage(chat, { messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'go' }] }] });
    await page.resumeStream();
    expect(page.lastMessage).toMatchObject({ id: messageId, role: 'assistant' });
    expect(page.lastMessage!.parts.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text)).toEqual(['finished anyway']);
    await ended;
    expect(session.history.at(-1)).toEqual(say('finished anyway'));
    expect(session.history).toContainEqual({ type: 'function_call_output', call_id: 's-1', output: 'slow done' });
    // and one that loads the conversation later has it, under the id the stream used
    expect(chat.messages().at(-1)).toMatchObject({ id: messageId, role: 'assistant' });
    // the session keeps working
    const next = await session.runTurn({ model: createScriptedModel([[say('still here')]]), input: 'again' });
    expect(next.finalText).toBe('still here');
  });
});
