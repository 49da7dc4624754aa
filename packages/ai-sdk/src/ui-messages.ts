import { displayName, toolName, type JsonObject, type JsonValue, type ResponseItem } from '@switchyard/protocol';
import { getToolName, isToolUIPart, type UIMessage } from 'ai';
import type { SwitchyardUIMessage } from './ui-data';
import { PROVIDER_METADATA_FIELD, messageText, reasoningText } from './prompt';

/** Options of {@link historyToUIMessages}. */
export interface HistoryToUIMessagesOptions {
  /**
   * Where assistant messages begin (history index) and their ids: what `createUIChat` recorded of
   * the turns it streamed, so a page that loads the conversation has the ids it followed. An
   * assistant message also begins after every user message; ids not given are `msg-<index>`.
   */
  turns?: ReadonlyArray<{ readonly start: number; readonly messageId: string }>;
}

type Part = SwitchyardUIMessage['parts'][number];
type Metadata = Record<string, Record<string, JsonValue>>;
/** What a part keeps of its item(s), under `providerMetadata.switchyard` (or `callProviderMetadata` / `resultProviderMetadata` on tool parts). */
type Kept = {
  /** The whole item, when its shape is not one the part rebuilds exactly. */
  item?: JsonObject;
  /** A message whose content is a list: this part starts it, and `count` text parts make it. */
  form?: 'parts';
  count?: number;
  id?: string;
  /** Function or freeform call, and its name as the model sent it. */
  kind?: 'function' | 'custom';
  name?: string;
  namespace?: string;
  /** A function call's arguments text when `JSON.stringify(input)` would not give it back. */
  arguments?: string;
  /** Index of an output item in its message's items (outputs are folded into their call's part). */
  at?: number;
  /** An input image's `detail`. */
  detail?: string;
};

const CALL_KEYS = new Set(['type', 'call_id', 'name', 'namespace', 'arguments', 'input', 'id', PROVIDER_METADATA_FIELD]);
const PARTS_MESSAGE_KEYS = new Set(['type', 'role', 'content', 'id', PROVIDER_METADATA_FIELD]);

/**
 * A session's history as UI messages, for `useChat({ messages })` / `new Chat({ messages })` and for
 * storage: a user message per user input; everything else — text, reasoning, calls with their
 * outputs (an `exec` part's input is the cell's source), notify and background outputs, hook
 * context — in the assistant message that follows. Each part keeps what it needs so that
 * {@link uiMessagesToHistory} gives the same items back. Nested calls, hook runs and cells are not
 * in the history, so these messages have no data parts for them (a streamed message has).
 */
export function historyToUIMessages(history: readonly ResponseItem[], options: HistoryToUIMessagesOptions = {}): SwitchyardUIMessage[] {
  const ids = new Map((options.turns ?? []).map((turn) => [turn.start, turn.messageId]));
  const messages: SwitchyardUIMessage[] = [];
  let assistant: AssistantMessage | undefined;
  history.forEach((item, index) => {
    if (item.type === 'message' && (item as { role?: string }).role === 'user') {
      assistant = undefined;
      messages.push({ id: `msg-${index}`, role: 'user', parts: userParts(item as unknown as JsonObject) });
      return;
    }
    if (!assistant || ids.has(index)) {
      assistant = new AssistantMessage(ids.get(index) ?? `msg-${index}`);
      messages.push(assistant.message);
    }
    assistant.add(item as unknown as JsonObject);
  });
  return messages;
}

/** Builds one assistant message from its items. */
class AssistantMessage {
  readonly message: SwitchyardUIMessage;
  private count = 0;
  /** Calls without an output yet, by call id. */
  private readonly open = new Map<string, Part & { toolCallId: string }>();

  constructor(id: string) {
    this.message = { id, role: 'assistant', parts: [] };
  }

  add(item: JsonObject): void {
    const at = this.count++;
    const parts = this.message.parts;
    const type = item.type as string;
    if (type === 'message' && item.role === 'assistant') parts.push(...assistantTextParts(item));
    else if (type === 'reasoning') parts.push({ type: 'reasoning', text: reasoningText(item), state: 'done', providerMetadata: keep({ item }) });
    else if (type === 'function_call' || type === 'custom_tool_call' || (type === 'tool_search_call' && item.execution === 'client')) this.call(item);
    else if (type.endsWith('_output') && this.open.has(item.call_id as string)) this.output(item, at);
    else parts.push({ type: 'data-switchyard-item', data: { item: item as ResponseItem } });
  }

  private call(item: JsonObject): void {
    const exact = Object.keys(item).every((key) => CALL_KEYS.has(key)) && item.type !== 'tool_search_call';
    const custom = item.type === 'custom_tool_call';
    const input = custom ? item.input : item.type === 'tool_search_call' ? item.arguments : parseArguments(item.arguments);
    const name = item.type === 'tool_search_call' ? 'tool_search' : displayName(toolName(String(item.name), item.namespace as string | undefined));
    const kept: Kept = exact
      ? {
          kind: custom ? 'custom' : 'function',
          name: String(item.name),
          ...(item.namespace !== undefined ? { namespace: String(item.namespace) } : {}),
          ...(item.id !== undefined ? { id: String(item.id) } : {}),
          ...(!custom && JSON.stringify(input) !== item.arguments ? { arguments: String(item.arguments) } : {}),
        }
      : { item };
    const part = { type: `tool-${name}`, toolCallId: String(item.call_id), state: 'input-available', input, callProviderMetadata: keep(kept, exact ? item[PROVIDER_METADATA_FIELD] : undefined) } as unknown as Part & { toolCallId: string };
    this.open.set(String(item.call_id), part);
    this.message.parts.push(part);
  }

  private output(item: JsonObject, at: number): void {
    const part = this.open.get(item.call_id as string) as unknown as Record<string, unknown>;
    this.open.delete(item.call_id as string);
    const plain = Object.keys(item).every((key) => key === 'type' || key === 'call_id' || key === 'output') && outputTypeOf(part) === item.type;
    part.state = 'output-available';
    part.output = item.type === 'tool_search_output' ? { tools: item.tools } : item.output;
    part.resultProviderMetadata = keep(plain ? { at } : { at, item });
  }
}

/** The parts of an assistant message item. */
function assistantTextParts(item: JsonObject): Part[] {
  const keys = Object.keys(item);
  if (typeof item.content === 'string' && keys.every((key) => key === 'type' || key === 'role' || key === 'content')) return [{ type: 'text', text: item.content, state: 'done' }];
  const content = item.content;
  const textsOnly = Array.isArray(content) && content.length > 0 && content.every((part) => isPlainText(part, 'output_text'));
  if (!textsOnly || !keys.every((key) => PARTS_MESSAGE_KEYS.has(key))) return [{ type: 'text', text: messageText(item), state: 'done', providerMetadata: keep({ item }) }];
  return (content as JsonObject[]).map((part, index) => ({
    type: 'text',
    text: String(part.text),
    state: 'done',
    ...(index === 0 ? { providerMetadata: keep({ form: 'parts', count: content.length, ...(item.id !== undefined ? { id: String(item.id) } : {}) }, item[PROVIDER_METADATA_FIELD]) } : {}),
  }));
}

function userParts(item: JsonObject): Part[] {
  const keys = Object.keys(item);
  if (typeof item.content === 'string' && keys.every((key) => key === 'type' || key === 'role' || key === 'content')) return [{ type: 'text', text: item.content }];
  const content = item.content;
  const simple = Array.isArray(content) && content.length > 0 && content.every((part) => isPlainText(part, 'input_text') || isImage(part)) && keys.every((key) => PARTS_MESSAGE_KEYS.has(key));
  if (!simple) return [{ type: 'text', text: messageText(item), providerMetadata: keep({ item }) }];
  return (content as JsonObject[]).map((part, index) => {
    const first = index === 0 ? { form: 'parts' as const, count: content.length, ...(item.id !== undefined ? { id: String(item.id) } : {}) } : undefined;
    const metadata = (kept: Kept) => (Object.keys(kept).length > 0 ? { providerMetadata: keep(kept, index === 0 ? item[PROVIDER_METADATA_FIELD] : undefined) } : {});
    if (part.type === 'input_text') return { type: 'text', text: String(part.text), ...metadata({ ...first }) } as Part;
    const url = String(part.image_url);
    return { type: 'file', mediaType: mediaTypeOf(url), url, ...metadata({ ...first, ...(part.detail !== undefined ? { detail: String(part.detail) } : {}) }) } as Part;
  });
}

/**
 * UI messages as history items — the inverse of {@link historyToUIMessages} for the messages it
 * made, item for item. For other messages (streamed, or made by a page): a user message's text and
 * images (other files are not carried: the protocol's input is text and images); text and
 * reasoning parts; each tool part as its call (a string input is a freeform call, anything else a
 * function call) and, once it has one, its output (an error part's text; a denied part
 * "<tool> rejected by user"), outputs after their step's calls; `data-switchyard-item` and
 * `data-switchyard-background` parts as their items. Other data parts are not history and are left out.
 */
export function uiMessagesToHistory(messages: readonly UIMessage[]): ResponseItem[] {
  const items: ResponseItem[] = [];
  for (const message of messages) {
    if (message.role === 'user') items.push(...userItems(message.parts));
    else if (message.role === 'system') items.push({ type: 'message', role: 'system', content: textOf(message.parts) });
    else items.push(...assistantItems(message.parts));
  }
  return items;
}

function userItems(parts: UIMessage['parts']): ResponseItem[] {
  const kept = keptOf(parts[0] as { providerMetadata?: unknown });
  if (kept?.item) return [kept.item as ResponseItem];
  const carried = parts.filter((part) => part.type === 'text' || (part.type === 'file' && part.mediaType.startsWith('image/')));
  if (carried.length === 0) return [];
  if (!kept?.form && carried.length === 1 && carried[0].type === 'text') return [{ type: 'message', role: 'user', content: carried[0].text }];
  const content = carried.map((part) => {
    if (part.type === 'text') return { type: 'input_text' as const, text: part.text };
    const detail = keptOf(part)?.detail;
    return { type: 'input_image' as const, image_url: (part as { url: string }).url, ...(detail !== undefined ? { detail: detail as 'auto' } : {}) };
  });
  return [{ type: 'message', role: 'user', content, ...(kept?.id !== undefined ? { id: kept.id } : {}), ...providerFields(parts[0] as { providerMetadata?: unknown }) } as ResponseItem];
}

function assistantItems(parts: UIMessage['parts']): ResponseItem[] {
  const items: ResponseItem[] = [];
  const outputs: Array<{ at?: number; callId: string; item: ResponseItem }> = [];
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index];
    if (part.type === 'text') {
      const kept = keptOf(part);
      if (kept?.item) items.push(kept.item as ResponseItem);
      else if (kept?.form === 'parts') {
        const texts = parts.slice(index, index + (kept.count ?? 1)).filter((candidate) => candidate.type === 'text');
        index += texts.length - 1;
        items.push({ type: 'message', role: 'assistant', content: texts.map((text) => ({ type: 'output_text', text: text.text })), ...(kept.id !== undefined ? { id: kept.id } : {}), ...providerFields(part) } as ResponseItem);
      } else items.push({ type: 'message', role: 'assistant', content: part.text, ...providerFields(part) } as ResponseItem);
    } else if (part.type === 'reasoning') {
      const kept = keptOf(part);
      items.push((kept?.item as ResponseItem | undefined) ?? ({ type: 'reasoning', summary: [{ type: 'summary_text', text: part.text }], ...providerFields(part) } as ResponseItem));
    } else if (isToolUIPart(part)) {
      items.push(callItem(part));
      const output = outputItem(part);
      if (output) outputs.push({ ...output, callId: part.toolCallId });
    } else if (part.type === 'data-switchyard-item' || part.type === 'data-switchyard-background') {
      items.push((part.data as { item: ResponseItem }).item);
    }
  }
  placeOutputs(items, outputs);
  return items;
}

type ToolPart = Extract<UIMessage['parts'][number], { toolCallId: string }>;

function callItem(part: ToolPart): ResponseItem {
  const kept = keptOf(part, 'callProviderMetadata');
  if (kept?.item) return kept.item as ResponseItem;
  const input = (part as { input?: unknown }).input;
  const kind = kept?.kind ?? (typeof input === 'string' ? 'custom' : 'function');
  const name = kept?.name ?? getToolName(part);
  const common = { call_id: part.toolCallId, name, ...(kept?.namespace !== undefined ? { namespace: kept.namespace } : {}) };
  const tail = { ...(kept?.id !== undefined ? { id: kept.id } : {}), ...providerFields(part, 'callProviderMetadata') };
  if (kind === 'custom') return { type: 'custom_tool_call', ...common, input: typeof input === 'string' ? input : JSON.stringify(input ?? ''), ...tail } as ResponseItem;
  return { type: 'function_call', ...common, arguments: kept?.arguments ?? JSON.stringify(input ?? {}), ...tail } as ResponseItem;
}

function outputItem(part: ToolPart): { at?: number; item: ResponseItem } | undefined {
  const kept = keptOf(part, 'resultProviderMetadata');
  const at = kept?.at;
  if (kept?.item) return { at, item: kept.item as ResponseItem };
  const type = outputTypeOf(part as unknown as Record<string, unknown>);
  let output: JsonValue;
  if (part.state === 'output-available') output = isOutputBody(part.output) ? part.output : JSON.stringify(part.output ?? null);
  else if (part.state === 'output-error') output = part.errorText;
  else if (part.state === 'output-denied') output = `${getToolName(part)} rejected by user`;
  else return undefined;
  return { at, item: { type, call_id: part.toolCallId, output } as ResponseItem };
}

/** Outputs go where they were (`at`), else after their step's calls, in the order given. */
function placeOutputs(items: ResponseItem[], outputs: ReadonlyArray<{ at?: number; callId: string; item: ResponseItem }>): void {
  const placed = outputs.filter((output) => output.at !== undefined).sort((a, b) => a.at! - b.at!);
  for (const output of placed) items.splice(Math.min(output.at!, items.length), 0, output.item);
  for (const output of outputs.filter((candidate) => candidate.at === undefined)) {
    let index = items.findIndex((item) => (item as { call_id?: string }).call_id === output.callId) + 1;
    while (index < items.length && /_call(_output)?$|_output$/.test(items[index].type)) index++;
    items.splice(index, 0, output.item);
  }
}

function outputTypeOf(part: Record<string, unknown>): string {
  const kept = keptOf(part as { callProviderMetadata?: unknown }, 'callProviderMetadata');
  const kind = kept?.item ? String(kept.item.type) : kept?.kind === 'custom' || typeof part.input === 'string' ? 'custom_tool_call' : 'function_call';
  return kind === 'tool_search_call' ? 'tool_search_output' : `${kind}_output`;
}

function keep(kept: Kept, provider?: JsonValue): Metadata {
  const others = provider && typeof provider === 'object' && !Array.isArray(provider) ? (provider as Metadata) : {};
  return { ...others, switchyard: kept as Record<string, JsonValue> };
}

function keptOf(part: object, field: 'providerMetadata' | 'callProviderMetadata' | 'resultProviderMetadata' = 'providerMetadata'): Kept | undefined {
  const metadata = (part as Record<string, unknown>)[field] as Metadata | undefined;
  return metadata?.switchyard as Kept | undefined;
}

/** A part's provider metadata other than what Switchyard kept, as the item's `provider_metadata`. */
function providerFields(part: object, field: 'providerMetadata' | 'callProviderMetadata' = 'providerMetadata'): { provider_metadata?: JsonObject } {
  const metadata = (part as Record<string, unknown>)[field] as Metadata | undefined;
  if (!metadata) return {};
  const { switchyard: _kept, ...others } = metadata;
  return Object.keys(others).length > 0 ? { [PROVIDER_METADATA_FIELD]: others as unknown as JsonObject } : {};
}

function parseArguments(text: unknown): unknown {
  try {
    return JSON.parse(String(text));
  } catch {
    return text;
  }
}

function isPlainText(part: unknown, type: string): boolean {
  const record = part as JsonObject;
  return typeof record === 'object' && record !== null && record.type === type && typeof record.text === 'string' && Object.keys(record).length === 2;
}

function isImage(part: unknown): boolean {
  const record = part as JsonObject;
  return typeof record === 'object' && record !== null && record.type === 'input_image' && typeof record.image_url === 'string' && Object.keys(record).every((key) => key === 'type' || key === 'image_url' || key === 'detail');
}

function isOutputBody(value: unknown): value is JsonValue {
  return typeof value === 'string' || (Array.isArray(value) && value.every((item) => isPlainText(item, 'input_text') || isImage(item)));
}

function mediaTypeOf(url: string): string {
  return /^data:([\w.+-]+\/[\w.+-]+)[;,]/.exec(url)?.[1] ?? 'image/*';
}

function textOf(parts: UIMessage['parts']): string {
  return parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
