import {
  codeModeName,
  toolName,
  type ContentItem,
  type JsonObject,
  type JsonSchema,
  type ResponseItem,
  type ToolOutputBody,
  type WireTool,
} from '@switchyard/protocol';

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
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export type ChatContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string; detail?: string } };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The name of the one string argument a freeform tool takes over Chat Completions. */
export const CUSTOM_TOOL_ARGUMENT = 'input';

/**
 * Maps a request's Responses-API tools to Chat Completions functions: functions as they are,
 * custom tools as a function with one string argument `input`, namespace members flattened with
 * the code-mode name rules (`clock` + `curr_time` → `clock__curr_time`). `tool_search` and hosted
 * tools have no Chat Completions equivalent and are left out. The first tool of a flat name wins.
 */
export function toChatTools(tools: readonly WireTool[]): { tools: ChatTool[]; targets: Map<string, ChatToolTarget> } {
  const out: ChatTool[] = [];
  const targets = new Map<string, ChatToolTarget>();
  const add = (flatName: string, target: ChatToolTarget, tool: ChatTool) => {
    if (targets.has(flatName)) return;
    targets.set(flatName, target);
    out.push(tool);
  };
  for (const tool of tools) {
    const record = tool as JsonObject & { type: string };
    if (record.type === 'function') {
      const fn = functionTool(record, codeModeName(toolName(String(record.name))));
      add(fn.function.name, { kind: 'function', name: String(record.name) }, fn);
    } else if (record.type === 'custom') {
      const flatName = codeModeName(toolName(String(record.name)));
      add(flatName, { kind: 'custom', name: String(record.name) }, customTool(record, flatName));
    } else if (record.type === 'namespace' && Array.isArray(record.tools)) {
      const namespace = String(record.name);
      for (const member of record.tools as JsonObject[]) {
        if (member.type !== 'function') continue;
        const flatName = codeModeName(toolName(String(member.name), namespace));
        add(flatName, { kind: 'function', name: String(member.name), namespace }, functionTool(member, flatName));
      }
    }
  }
  return { tools: out, targets };
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

/**
 * Maps the Responses-API input history to Chat Completions messages. Tool calls join the assistant
 * message before them; outputs become `tool` messages. A second output for an already answered
 * call (a `notify` injection) and images in tool outputs become a `user` message placed after
 * the run of tool messages. Tool-search items, reasoning and unknown items are left out.
 */
export function toChatMessages(input: readonly ResponseItem[], instructions?: string): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (instructions !== undefined && instructions !== '') messages.push({ role: 'system', content: instructions });
  const answered = new Set<string>();
  let deferred: ChatContentPart[] = [];
  const flushDeferred = () => {
    if (deferred.length === 0) return;
    messages.push({ role: 'user', content: deferred.every((part) => part.type === 'text') ? textOf(deferred) : deferred });
    deferred = [];
  };

  for (const item of input) {
    const record = item as JsonObject & { type: string };
    const isOutput = record.type === 'function_call_output' || record.type === 'custom_tool_call_output';
    if (!isOutput) flushDeferred();
    switch (record.type) {
      case 'message':
        pushMessage(messages, record);
        break;
      case 'function_call':
      case 'custom_tool_call': {
        const namespace = typeof record.namespace === 'string' ? record.namespace : undefined;
        const call: ChatToolCall = {
          id: String(record.call_id),
          type: 'function',
          function: {
            name: codeModeName(toolName(String(record.name), namespace)),
            arguments: record.type === 'function_call' ? String(record.arguments ?? '') : JSON.stringify({ [CUSTOM_TOOL_ARGUMENT]: String(record.input ?? '') }),
          },
        };
        const last = messages.at(-1);
        if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
        else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
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
  if (role === 'assistant') messages.push({ role, content: textOf(parts) });
  else messages.push({ role, content: parts.every((part) => part.type === 'text') ? textOf(parts) : parts });
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
