import {
  codeModeName,
  toolName,
  toolNameKey,
  MAX_WIRE_NAME_LENGTH,
  type ContentItem,
  type JsonObject,
  type JsonSchema,
  type ResponseItem,
  type ToolOutputBody,
  type WireTool,
} from '@switchyard/protocol';
import { shortenName } from '@switchyard/kit/internal';

/** A Chat Completions function tool. */
export interface ChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema; strict?: boolean };
}

/** What a flat Chat Completions function name stands for in the Switchyard plan. */
export type ChatToolTarget =
  | { kind: 'function'; name: string; namespace?: string }
  | { kind: 'custom'; name: string; namespace?: string };

/** A Chat Completions message (the subset Switchyard writes). */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[]; reasoning_content?: string; refusal?: string }
  | { role: 'tool'; tool_call_id: string; content: string };

export type ChatContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: string } };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  /** Provider data the server sent with the call (Gemini's thought signature), sent back as it came. */
  extra_content?: JsonObject;
}

/** The Chat Completions function name of a tool, given its name and namespace. */
export type ChatNameOf = (name: string, namespace?: string) => string;

/** Characters of a namespaced tool's own name kept at the end of a shortened flat name. */
const KEPT_TOOL_NAME = 40;

/**
 * The default flat name of a tool: the code-mode name (`clock` + `curr_time` →
 * `clock__curr_time`), shortened to 64 characters when longer (providers reject longer function
 * names): the start, a stable hash, and the tool's own name (up to 40 characters) at the end.
 */
export function defaultChatName(name: string, namespace?: string, hashOf?: string): string {
  const full = codeModeName(toolName(name, namespace));
  return shortenName(full, { maxLength: MAX_WIRE_NAME_LENGTH, keepEnd: namespace ? Math.min(name.length, KEPT_TOOL_NAME) : 0, hashOf: hashOf ?? full });
}

/** The name of the one string argument a freeform tool takes over Chat Completions. */
export const CUSTOM_TOOL_ARGUMENT = 'input';

/**
 * Maps a request's Responses-API tools to Chat Completions functions: functions as they are,
 * custom tools as a function with one string argument `input`, namespace members flattened with
 * the code-mode name rules (`clock` + `curr_time` → `clock__curr_time`). `tool_search` and hosted
 * tools have no Chat Completions equivalent and are left out. The first tool of a flat name wins.
 * A flat name over 64 characters is shortened ({@link defaultChatName}); should two tools still
 * meet, the later one is hashed again until it is unique. `targets` maps each sent name back to
 * its tool; `chatName` gives the sent name of a tool (for the calls in the history).
 */
export function toChatTools(tools: readonly WireTool[]): { tools: ChatTool[]; targets: Map<string, ChatToolTarget>; chatName: ChatNameOf } {
  const out: ChatTool[] = [];
  const targets = new Map<string, ChatToolTarget>();
  const sent = new Map<string, string>();
  const add = (target: ChatToolTarget, build: (flatName: string) => ChatTool) => {
    const key = toolNameKey(toolName(target.name, target.namespace));
    if (sent.has(key)) return;
    const full = codeModeName(toolName(target.name, target.namespace));
    let flatName = defaultChatName(target.name, target.namespace);
    if (targets.has(flatName) && full === flatName) return; // the same flat name twice: the first wins
    for (let attempt = 2; targets.has(flatName); attempt++) flatName = defaultChatName(target.name, target.namespace, `${full}#${attempt}`);
    targets.set(flatName, target);
    sent.set(key, flatName);
    out.push(build(flatName));
  };
  for (const tool of tools) {
    const record = tool as JsonObject & { type: string };
    if (record.type === 'function') {
      add({ kind: 'function', name: String(record.name) }, (flatName) => functionTool(record, flatName));
    } else if (record.type === 'custom') {
      add({ kind: 'custom', name: String(record.name) }, (flatName) => customTool(record, flatName));
    } else if (record.type === 'namespace' && Array.isArray(record.tools)) {
      const namespace = String(record.name);
      for (const member of record.tools as JsonObject[]) {
        if (member.type === 'function') add({ kind: 'function', name: String(member.name), namespace }, (flatName) => functionTool(member, flatName));
        else if (member.type === 'custom') add({ kind: 'custom', name: String(member.name), namespace }, (flatName) => customTool(member, flatName));
      }
    }
  }
  const chatName: ChatNameOf = (name, namespace) => sent.get(toolNameKey(toolName(name, namespace))) ?? defaultChatName(name, namespace);
  return { tools: out, targets, chatName };
}

function functionTool(spec: JsonObject, flatName: string): ChatTool {
  const fn: ChatTool['function'] = {
    name: flatName,
    description: typeof spec.description === 'string' ? spec.description : '',
    parameters: (spec.parameters as JsonSchema) ?? { type: 'object', properties: {} },
  };
  if (spec.strict === true) fn.strict = true;
  return { type: 'function', function: fn };
}

function customTool(spec: JsonObject, flatName: string): ChatTool {
  const format = spec.format as { type?: string; syntax?: string; definition?: string } | undefined;
  const inputDescription =
    format?.type === 'grammar' && typeof format.definition === 'string'
      ? `The raw input. It must match this ${format.syntax} grammar:\n${format.definition}`
      : 'The raw input.';
  return {
    type: 'function',
    function: {
      name: flatName,
      description: typeof spec.description === 'string' ? spec.description : '',
      parameters: {
        type: 'object',
        properties: { [CUSTOM_TOOL_ARGUMENT]: { type: 'string', description: inputDescription } },
        required: [CUSTOM_TOOL_ARGUMENT],
        additionalProperties: false,
      },
    },
  };
}

/** The text of a `reasoning` item: its `reasoning_text` content, else its summary texts. */
function reasoningText(record: JsonObject): string {
  const parts = [...(Array.isArray(record.content) ? record.content : []), ...(Array.isArray(record.summary) && !Array.isArray(record.content) ? record.summary : [])];
  return parts.map((part) => (typeof part === 'object' && part !== null && typeof (part as JsonObject).text === 'string' ? ((part as JsonObject).text as string) : '')).join('');
}

/**
 * Maps the Responses-API input history to Chat Completions messages. Tool calls join the assistant
 * message before them; outputs become `tool` messages. A second output for an already answered
 * call (a `notify` injection) and images in tool outputs become a `user` message placed after
 * the run of tool messages. Reasoning since the last user message goes back as the next assistant
 * message's `reasoning_content` (what DeepSeek, vLLM and llama.cpp expect within a tool-calling
 * turn; older reasoning is dropped, as DeepSeek requires). A call's `extra_content` goes back on
 * its tool call. Tool-search items and unknown items are left out. `chatName` names the calls
 * (default {@link defaultChatName}; pass the one of `toChatTools` so shortened names match).
 */
export function toChatMessages(input: readonly ResponseItem[], instructions?: string, chatName: ChatNameOf = defaultChatName): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (instructions !== undefined && instructions !== '') messages.push({ role: 'system', content: instructions });
  const answered = new Set<string>();
  let deferred: ChatContentPart[] = [];
  let reasoning = '';
  const flushDeferred = () => {
    if (deferred.length === 0) return;
    messages.push({ role: 'user', content: deferred.every((part) => part.type === 'text') ? textOf(deferred) : deferred });
    deferred = [];
  };
  const lastUser = input.reduce((last, item, index) => ((item as JsonObject).type === 'message' && (item as JsonObject).role === 'user' ? index : last), -1);
  const takeReasoning = (message: ChatMessage & { role: 'assistant' }) => {
    if (reasoning !== '') message.reasoning_content = reasoning;
    reasoning = '';
    return message;
  };

  for (const [index, item] of input.entries()) {
    const record = item as JsonObject & { type: string };
    const isOutput = record.type === 'function_call_output' || record.type === 'custom_tool_call_output';
    if (!isOutput && record.type !== 'reasoning') flushDeferred();
    switch (record.type) {
      case 'reasoning':
        if (index > lastUser) reasoning += reasoningText(record);
        break;
      case 'message':
        pushMessage(messages, record);
        if (record.role === 'assistant') takeReasoning(messages.at(-1) as ChatMessage & { role: 'assistant' });
        break;
      case 'function_call':
      case 'custom_tool_call': {
        const namespace = typeof record.namespace === 'string' ? record.namespace : undefined;
        const call: ChatToolCall = {
          id: String(record.call_id),
          type: 'function',
          function: {
            name: chatName(String(record.name), namespace),
            arguments: record.type === 'function_call' ? String(record.arguments ?? '') : JSON.stringify({ [CUSTOM_TOOL_ARGUMENT]: String(record.input ?? '') }),
          },
        };
        if (typeof record.extra_content === 'object' && record.extra_content !== null && !Array.isArray(record.extra_content)) call.extra_content = record.extra_content as JsonObject;
        const last = messages.at(-1);
        if (last?.role === 'assistant' && reasoning === '') (last.tool_calls ??= []).push(call);
        else messages.push(takeReasoning({ role: 'assistant', content: null, tool_calls: [call] }));
        break;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const callId = String(record.call_id);
        const { text, images } = splitOutput(record.output as ToolOutputBody);
        if (answered.has(callId)) {
          if (text !== '') deferred.push({ type: 'text', text });
        } else {
          answered.add(callId);
          messages.push({ role: 'tool', tool_call_id: callId, content: text });
        }
        deferred.push(...images);
        break;
      }
      default:
        break;
    }
  }
  flushDeferred();
  return messages;
}

function pushMessage(messages: ChatMessage[], record: JsonObject): void {
  const role = record.role === 'assistant' ? 'assistant' : record.role === 'user' ? 'user' : 'system';
  const parts: ChatContentPart[] = [];
  if (typeof record.content === 'string') parts.push({ type: 'text', text: record.content });
  else if (Array.isArray(record.content)) {
    for (const part of record.content as JsonObject[]) {
      if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
      else if (part.type === 'input_image' && typeof part.image_url === 'string' && role === 'user') parts.push(imagePart(part as unknown as ContentItem));
    }
  }
  if (role === 'assistant') messages.push(assistantMessage(record, parts));
  else messages.push({ role, content: parts.every((part) => part.type === 'text') ? textOf(parts) : parts });
}

/** An assistant message; a `refusal` part goes back as the message's own `refusal` field. */
function assistantMessage(record: JsonObject, parts: ChatContentPart[]): ChatMessage {
  const refusal = Array.isArray(record.content)
    ? (record.content as JsonObject[]).map((part) => (part.type === 'refusal' && typeof part.refusal === 'string' ? part.refusal : '')).join('')
    : '';
  if (refusal === '') return { role: 'assistant', content: textOf(parts) };
  return { role: 'assistant', content: parts.length > 0 ? textOf(parts) : null, refusal };
}

function splitOutput(output: ToolOutputBody): { text: string; images: ChatContentPart[] } {
  if (typeof output === 'string') return { text: output, images: [] };
  if (!Array.isArray(output)) return { text: '', images: [] };
  const texts: string[] = [];
  const images: ChatContentPart[] = [];
  for (const item of output) {
    if (item.type === 'input_text') texts.push(item.text);
    else if (item.type === 'input_image') images.push(imagePart(item));
  }
  return { text: texts.join('\n'), images };
}

function imagePart(item: ContentItem): ChatContentPart {
  const image = item as { image_url: string; detail?: string };
  const url: { url: string; detail?: string } = { url: image.image_url };
  if (image.detail && image.detail !== 'original') url.detail = image.detail;
  return { type: 'image_url', image_url: url };
}

function textOf(parts: ChatContentPart[]): string {
  return parts.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}
