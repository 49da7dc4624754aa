/**
 * The page boundary under abuse: what a browser (or anyone who can reach the chat's routes) sends,
 * and event sequences no session produces, through the UI message stream. What must hold: every
 * request gets an HTTP answer (never a throw), a bad one a 4xx that changes nothing; a tool that asks
 * first runs at most once however its answer is sent; every chunk is one the AI SDK's own schema
 * accepts and the AI SDK's own reader assembles without an error; the session runs the next turn.
 * (Listed in tools/reliability's README; it lives here because the AI SDK needs Node 22+.)
 */
import { safeValidateTypes } from '@ai-sdk/provider-utils';
import { defineFunctionTool } from '@switchyard/kit';
import type { ApprovalRequest } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { readUIMessageStream, uiMessageChunkSchema, type UIMessageChunk } from 'ai';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createUIApprovals, createUIChat, toUIMessageStream, type ApprovalNotice, type UIChat } from '../src/index';
import { say } from './ui-fixtures';
import { collectUnhandledRejections } from '@switchyard/test-helpers';

const unhandled = collectUnhandledRejections();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  expect(unhandled).toEqual([]);
});

const API = 'http://chat.test/api/chat';
const post = (chat: UIChat, body: string | Uint8Array, type = 'application/json') => chat.post(new Request(API, { method: 'POST', headers: { 'content-type': type }, body }));

function refundChat() {
  const refunds: number[] = [];
  const approvals = createUIApprovals();
  const refund = defineFunctionTool<{ order: number }>({
    name: 'refund',
    description: 'Refunds an order.',
    parameters: { type: 'object', properties: { order: { type: 'number' } }, required: ['order'] },
    needsApproval: true,
    handle: ({ args }) => void refunds.push(args.order),
  });
  const session = createSession({ tools: [refund], approvals });
  const model = createScriptedModel((request) =>
    request.input.at(-1)!.type === 'function_call_output' ? [say('done')] : [{ type: 'function_call', call_id: `r-${request.input.length}`, name: 'refund', arguments: '{"order":1}' }],
  );
  const chat = createUIChat({ session, model, approvals });
  cleanups.push(() => session.shutdown(), () => chat.close());
  return { chat, session, refunds, approvals };
}

/** Reads a response's SSE body into chunks. */
async function chunksOf(response: Response): Promise<UIMessageChunk[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: ') && frame !== 'data: [DONE]')
    .map((frame) => JSON.parse(frame.slice(6)) as UIMessageChunk);
}

describe('the chat routes under abuse', () => {
  it('random bodies: each an HTTP answer, a bad one a 4xx, nothing recorded; the next message works', async () => {
    const { chat, session } = refundChat();
    const message = fc.record({ id: fc.string(), role: fc.oneof(fc.constantFrom('user', 'assistant', 'system'), fc.string()), parts: fc.array(fc.anything(), { maxLength: 3 }) });
    const bodies = fc.oneof(
      fc.string(),
      fc.uint8Array({ maxLength: 200 }),
      fc.jsonValue().map((value) => JSON.stringify(value)),
      fc.record({ id: fc.anything(), messages: fc.anything(), trigger: fc.anything() }).map((value) => JSON.stringify(value)),
      fc.record({ messages: fc.array(message, { maxLength: 3 }) }).map((value) => JSON.stringify(value)),
    );
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const response = await post(chat, body);
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        expect(response.status).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
        expect((await response.text()).length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
    // deep nesting and a body far over the limit, whose length is not declared
    const deep = `{"messages":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect((await post(chat, deep)).status).toBe(400);
    const flood = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new Uint8Array(1 << 20).fill(32));
      },
    });
    const huge = await chat.post(new Request(API, { method: 'POST', headers: { 'content-type': 'application/json' }, body: flood, duplex: 'half' } as RequestInit));
    expect([huge.status, await huge.text()]).toEqual([413, 'the request body is over 4194304 bytes']);
    expect(session.history).toEqual([]);
    console.log(`[reliability] chat routes: ${[...statuses].map(([status, count]) => `${count}×${status}`).join(', ')}, deep nesting 400, endless body 413`);
    // the chat still serves: a message starts a turn
    const ok = await post(chat, JSON.stringify({ messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'refund' }] }] }));
    expect(ok.status).toBe(200);
    expect((await chunksOf(ok)).some((chunk) => chunk.type === 'tool-approval-request')).toBe(true);
  });

  it('random follow requests answer at once (or after their capped wait) with 204 or a stream', async () => {
    const { chat } = refundChat();
    const chatWithCap = createUIChat({ session: createSession({ tools: [] }), model: createScriptedModel([]), maxFollowWaitMs: 50 });
    cleanups.push(() => chatWithCap.close());
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.oneof(fc.string(), fc.integer().map(String), fc.constant('1e308'), fc.constant('-Infinity')), async (after, wait) => {
        const url = `${API}/c/stream?after=${encodeURIComponent(after)}&wait=${encodeURIComponent(wait)}`;
        const started = Date.now();
        const response = await chatWithCap.follow(new Request(url));
        expect(response.status).toBe(204);
        expect(Date.now() - started).toBeLessThan(2_000);
      }),
      { numRuns: 60 },
    );
    const gone = new AbortController();
    const pending = chat.follow(new Request(`${API}/c/stream?wait=30000`, { signal: gone.signal }));
    gone.abort();
    expect((await pending).status).toBe(204);
  });

  it("approval answers: forged, another chat's, sent twice at once — the tool runs once, for its own chat only", async () => {
    const alice = refundChat();
    const bob = refundChat();
    const ask = async ({ chat }: { chat: UIChat }) => {
      const chunks = await chunksOf(await post(chat, JSON.stringify({ messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'refund' }] }] })));
      const start = chunks.find((chunk) => chunk.type === 'start') as { messageId: string };
      const request = chunks.find((chunk) => chunk.type === 'tool-approval-request') as { approvalId: string; toolCallId: string };
      return { messageId: start.messageId, ...request };
    };
    const answer = (asked: { messageId: string; approvalId: string; toolCallId: string }, approvalId = asked.approvalId) =>
      JSON.stringify({
        messages: [
          { id: 'u', role: 'user', parts: [{ type: 'text', text: 'refund' }] },
          { id: asked.messageId, role: 'assistant', parts: [{ type: 'tool-refund', toolCallId: asked.toolCallId, state: 'approval-responded', input: { order: 1 }, approval: { id: approvalId, approved: true } }] },
        ],
      });
    const [a, b] = [await ask(alice), await ask(bob)];
    // Bob answers Alice's approval in his own chat: refused, Alice's still waits
    const crossed = await post(bob.chat, answer(b, a.approvalId));
    expect(crossed.status).toBe(400);
    expect(alice.approvals.pending.map((pending) => pending.approvalId)).toEqual([a.approvalId]);
    // Alice's page sends its answer twice at once (a double click, a retried request)
    const [first, second] = await Promise.all([post(alice.chat, answer(a)), post(alice.chat, answer(a))]);
    expect([first.status, second.status]).toEqual([200, 200]);
    const streams = await Promise.all([chunksOf(first), chunksOf(second)]);
    for (const chunks of streams) expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    expect(alice.refunds).toEqual([1]);
    expect(bob.refunds).toEqual([]);
    expect(bob.approvals.pending).toHaveLength(1);
    // and again after the turn ended: settled, a stream of how it ended, nothing runs
    const late = await post(alice.chat, answer(a));
    expect(late.status).toBe(200);
    expect(alice.refunds).toEqual([1]);
  });
});

describe('the UI message stream under event sequences no session produces', () => {
  const id = fc.constantFrom('c1', 'c2', 'c3', 'exec-1', 'cell-a');
  const source = fc.oneof(fc.constant({ kind: 'direct' }), fc.record({ kind: fc.constant('code-mode'), cellId: fc.constantFrom('cell-a', 'cell-b'), runtimeToolCallId: fc.constant('tool-1') }));
  const output = fc.oneof(fc.string(), fc.array(fc.record({ type: fc.constant('input_text'), text: fc.string() }), { maxLength: 2 }));
  const event = fc.oneof(
    fc.constantFrom({ type: 'step-start' }, { type: 'model-retry' }, { type: 'turn-end' }, { type: 'unknown-event' }),
    fc.string().map((delta) => ({ type: 'text-delta', delta })),
    fc.record({ type: fc.constant('model-item'), item: fc.oneof(
      fc.record({ type: fc.constant('message'), role: fc.constantFrom('assistant', 'developer'), content: fc.string() }),
      fc.record({ type: fc.constant('function_call'), call_id: id, name: fc.string(), arguments: fc.oneof(fc.string(), fc.jsonValue().map((v) => JSON.stringify(v))) }),
      fc.record({ type: fc.constant('custom_tool_call'), call_id: id, name: fc.constant('exec'), input: fc.string() }),
      fc.record({ type: fc.constant('reasoning'), summary: fc.array(fc.record({ type: fc.constant('summary_text'), text: fc.string() }), { maxLength: 2 }) }),
      fc.record({ type: fc.string(), weird: fc.anything() }),
    ) }),
    fc.record({ type: fc.constant('tool-call-start'), callId: id, toolName: fc.string(), source, input: fc.option(fc.string(), { nil: undefined }) }),
    fc.record({ type: fc.constantFrom('tool-call-end', 'tool-call-blocked', 'tool-call-aborted'), callId: id, toolName: fc.string(), source, success: fc.boolean(), durationMs: fc.double(), reason: fc.string() }),
    fc.record({ type: fc.constant('tool-output'), item: fc.record({ type: fc.constantFrom('function_call_output', 'custom_tool_call_output'), call_id: id, output }) }),
    fc.record({ type: fc.constant('cell-start'), cellId: fc.constantFrom('cell-a', 'cell-b'), execCallId: fc.option(id, { nil: undefined }) }),
    fc.record({ type: fc.constant('cell-end'), cellId: fc.constantFrom('cell-a', 'cell-b'), status: fc.constantFrom('completed', 'failed', 'terminated') }),
    fc.record({ type: fc.constant('hook-end'), runId: fc.string(), event: fc.constant('PreToolUse'), toolName: fc.string(), outcome: fc.constantFrom('continue', 'block'), durationMs: fc.nat() }),
    fc.record({ type: fc.constant('background-complete'), callId: id, cellId: fc.constant('cell-a'), status: fc.constant('completed'), item: fc.record({ type: fc.constant('custom_tool_call_output'), call_id: id, output }) }),
  );
  const notice = fc.oneof(
    fc.record({ type: fc.constant('approval-requested'), approvalId: fc.constantFrom('a1', 'a2'), request: fc.record({ kind: fc.constant('tool'), toolName: fc.string(), callId: id }) }),
    fc.record({ type: fc.constant('approval-settled'), approvalId: fc.constantFrom('a1', 'a2', 'a3'), approved: fc.boolean() }),
  );

  it('every chunk valid, and the AI SDK reader assembles the message without an error', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof({ arbitrary: event, weight: 4 }, { arbitrary: notice.map((n) => ({ notice: n })), weight: 1 }), { maxLength: 40 }), async (script) => {
        const listeners = new Set<(notice: ApprovalNotice) => void>();
        const approvals = { ...createUIApprovals(), subscribe: (listener: (notice: ApprovalNotice) => void) => (listeners.add(listener), () => listeners.delete(listener)) };
        async function* events() {
          for (const step of script) {
            if ('notice' in step) for (const listener of listeners) listener({ ...step.notice, request: { ...(step.notice as { request?: object }).request, signal: new AbortController().signal } } as ApprovalNotice & { request: ApprovalRequest });
            else yield step as { type: string };
          }
        }
        const [forSchema, forReader] = toUIMessageStream(events(), { approvals }).tee();
        for await (const chunk of forSchema) expect((await safeValidateTypes({ value: chunk, schema: uiMessageChunkSchema })).success).toBe(true);
        const errors: unknown[] = [];
        for await (const _message of readUIMessageStream({ stream: forReader, onError: (error) => errors.push(error) })) void _message;
        expect(errors.map(String)).toEqual([]);
      }),
      { numRuns: Number(process.env.UI_FUZZ_RUNS ?? 500) },
    );
  }, 300_000);
});
