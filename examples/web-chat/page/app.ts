// The page: the AI SDK's framework-agnostic client (`AbstractChat` over plain state, as the React,
// Vue and Svelte `Chat` classes are) and a few lines of DOM. It shows each Code Mode cell with its
// nested calls, approval buttons, and background results that arrive after a turn ended.
import type { NestedCallData, SwitchyardUIMessage } from '@switchyard/ai-sdk';
import { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, type ChatInit, type ChatState, type ChatStatus } from 'ai';

/** `Chat` without a framework: the state is plain fields, and every change re-renders. */
class Chat extends AbstractChat<SwitchyardUIMessage> {
  constructor(init: ChatInit<SwitchyardUIMessage>, onChange: () => void) {
    let messages = init.messages ?? [];
    let status: ChatStatus = 'ready';
    let error: Error | undefined;
    const state: ChatState<SwitchyardUIMessage> = {
      get status() {
        return status;
      },
      set status(next) {
        status = next;
        onChange();
      },
      get error() {
        return error;
      },
      set error(next) {
        error = next;
        onChange();
      },
      get messages() {
        return messages;
      },
      set messages(next) {
        messages = next;
        onChange();
      },
      pushMessage: (message) => void (state.messages = [...messages, message]),
      popMessage: () => void (state.messages = messages.slice(0, -1)),
      replaceMessage: (index, message) => void (state.messages = messages.map((old, at) => (at === index ? message : old))),
      snapshot: (value) => structuredClone(value),
    };
    super({ ...init, state });
  }
}

const chatId = new URLSearchParams(location.search).get('chat') ?? 'default';
const lastAssistantId = (): string | undefined => chat.messages.findLast((message) => message.role === 'assistant')?.id;

const transport = new DefaultChatTransport<SwitchyardUIMessage>({
  api: '/api/chat',
  // POST /api/chat/<id>: the route names the chat
  prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({ api: `/api/chat/${id}`, body: { id, messages, trigger, messageId } }),
  // GET /api/chat/<id>/stream?after=<last message>&wait=<ms>: what this page has not seen yet
  prepareReconnectToStreamRequest: ({ id }) => ({ api: `/api/chat/${id}/stream?wait=25000${lastAssistantId() ? `&after=${encodeURIComponent(lastAssistantId()!)}` : ''}` }),
});

// the conversation so far: a reload shows it again, under the ids the streams used
const loaded = (await (await fetch(`/api/chat/${chatId}/messages`)).json()) as SwitchyardUIMessage[];
let scheduled = false;
const chat: Chat = new Chat({ id: chatId, transport, messages: loaded, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses }, () => {
  if (scheduled) return;
  scheduled = true;
  queueMicrotask(() => {
    scheduled = false;
    render();
  });
});

// ---- following: background results arrive in turns the session runs itself ----
let following = false;
async function follow(): Promise<void> {
  for (;;) {
    if (chat.status !== 'ready' || sending) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    following = true;
    await chat.resumeStream();
    following = false;
  }
}

/** A page's own request must not race the follow request: stop following first. */
let sending = false;
async function send(action: () => PromiseLike<void> | void): Promise<void> {
  sending = true;
  try {
    if (following) await chat.stop();
    await action();
  } finally {
    sending = false;
  }
}

// ---- rendering ----
type Part = SwitchyardUIMessage['parts'][number];
function h(tag: string, attributes: Record<string, string> = {}, ...children: Array<Node | string | undefined>): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) if (child !== undefined) element.append(child);
  return element;
}

const outputText = (output: unknown): string =>
  typeof output === 'string' ? output : Array.isArray(output) ? output.map((item: { text?: string }) => item.text ?? '[image]').join('\n') : JSON.stringify(output);

function nestedCalls(execCallId: string): NestedCallData[] {
  const calls = chat.messages.flatMap((message) => message.parts).filter((part) => part.type === 'data-switchyard-call' && part.data.execCallId === execCallId);
  return calls.map((part) => (part as { data: NestedCallData }).data);
}

function approvalButtons(part: Extract<Part, { toolCallId: string }>): HTMLElement | undefined {
  if (part.state !== 'approval-requested') return undefined;
  const descriptor = part.approval.descriptor as { toolName?: string; input?: unknown } | undefined;
  const answer = (approved: boolean) => () => void send(() => chat.addToolApprovalResponse({ id: part.approval.id, approved }));
  const approve = h('button', { class: 'approve' }, 'Approve');
  const deny = h('button', { class: 'deny' }, 'Deny');
  approve.onclick = answer(true);
  deny.onclick = answer(false);
  return h('div', { class: 'approval' }, `${descriptor?.toolName ?? 'this call'} ${JSON.stringify(descriptor?.input ?? {})} needs your approval `, approve, deny);
}

function toolPart(part: Extract<Part, { toolCallId: string }>): HTMLElement {
  const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length);
  const done = part.state === 'output-available' ? outputText(part.output) : part.state === 'output-error' ? part.errorText : part.state === 'output-denied' ? 'denied' : undefined;
  if (name === 'exec') {
    const nested = nestedCalls(part.toolCallId).map((call) => h('li', { class: `nested-call ${call.status}` }, `${call.toolName}(${JSON.stringify(call.input ?? call.inputPreview ?? {})}) — ${call.status}`));
    return h(
      'div',
      { class: 'cell', 'data-call-id': part.toolCallId },
      h('h4', {}, 'Code Mode cell ', h('span', { class: 'status' }, part.state)),
      h('pre', { class: 'source' }, String(part.input ?? '')),
      h('ul', { class: 'nested' }, ...nested),
      done === undefined ? undefined : h('pre', { class: 'output' }, done),
      approvalButtons(part),
    );
  }
  return h(
    'div',
    { class: 'tool', 'data-tool': name, 'data-call-id': part.toolCallId },
    h('h4', {}, `${name}(${JSON.stringify(part.input ?? {})}) `, h('span', { class: 'status' }, part.state)),
    done === undefined ? undefined : h('pre', { class: 'output' }, done),
    approvalButtons(part),
  );
}

function renderPart(part: Part): HTMLElement | undefined {
  if (part.type === 'text') return h('p', { class: 'text' }, part.text);
  if (part.type === 'reasoning') return h('details', {}, h('summary', {}, 'reasoning'), part.text);
  if ('toolCallId' in part) return toolPart(part);
  if (part.type === 'data-switchyard-background') {
    const { status, cellId, processId, item } = part.data;
    return h('div', { class: 'background' }, h('h4', {}, `Background result (${cellId ? `cell ${cellId}` : `process ${processId}`}, ${status})`), h('pre', {}, outputText((item as { output?: unknown }).output)));
  }
  if (part.type === 'data-switchyard-hook') return h('div', { class: 'hook' }, `hook ${part.data.event} on ${part.data.toolName}: ${part.data.outcome}${part.data.message ? ` — ${part.data.message}` : ''}`);
  return undefined;
}

function render(): void {
  const list = document.getElementById('messages')!;
  list.replaceChildren(...chat.messages.map((message) => h('div', { class: `message ${message.role}`, 'data-message-id': message.id }, ...message.parts.map(renderPart))));
  document.getElementById('error')!.textContent = chat.error ? `Error: ${chat.error.message}` : '';
  (document.getElementById('send') as HTMLButtonElement).disabled = chat.status === 'submitted' || chat.status === 'streaming';
  document.body.dataset.status = chat.status;
}

document.getElementById('composer')!.addEventListener('submit', (event) => {
  event.preventDefault();
  const input = document.getElementById('input') as HTMLInputElement;
  const text = input.value.trim();
  if (!text) return;
  input.value = '';
  void send(() => chat.sendMessage({ text }));
});

render();
document.body.dataset.ready = 'true';
void follow();
