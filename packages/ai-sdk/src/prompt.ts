import type {
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4TextPart,
  LanguageModelV4ToolResultOutput,
  SharedV4ProviderOptions,
} from '@ai-sdk/provider';
import { codeModeName, toolName, type ContentItem, type JsonObject, type ResponseItem, type ToolOutputBody } from '@switchyard/protocol';
import { customToolArgument, type CustomToolMode } from './tool-table';

/**
 * The field under which items produced by {@link aiSdkModel} keep the provider's metadata
 * (signatures of reasoning and tool calls, item ids), so the next request hands it back.
 */
export const PROVIDER_METADATA_FIELD = 'provider_metadata';

type AssistantPart = Extract<LanguageModelV4Message, { role: 'assistant' }>['content'][number];
type ToolPart = Extract<LanguageModelV4Message, { role: 'tool' }>['content'][number];

/**
 * Maps the Responses-API history to an AI SDK prompt:
 * - `instructions` and the developer/system messages before the first other item become `system`
 *   messages; a later developer/system message (a hook's `<hook_context>`) becomes a `user` message,
 *   because several providers accept system text only at the start;
 * - tool calls join the assistant message before them (`exec`'s raw code becomes `{ code }` in
 *   function form), outputs become `tool-result` parts in one `tool` message per run of outputs;
 * - a second output for an already answered call (a `notify()` injection) becomes a `user` message
 *   after that run, since every provider allows one result per call;
 * - reasoning items keep their text and provider metadata; tool-search items and unknown items are
 *   left out (they have no provider-neutral form).
 */
export function toAiSdkPrompt(input: readonly ResponseItem[], options: { instructions?: string; customTools: CustomToolMode }): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [];
  if (options.instructions) prompt.push({ role: 'system', content: options.instructions });
  const callNames = new Map<string, string>();
  const answered = new Set<string>();
  let leading = true;
  let deferred: string[] = [];
  const flushDeferred = () => {
    if (deferred.length) prompt.push({ role: 'user', content: deferred.map((text) => ({ type: 'text', text })) });
    deferred = [];
  };
  const assistant = (part: AssistantPart) => {
    const last = prompt.at(-1);
    if (last?.role === 'assistant') last.content.push(part);
    else prompt.push({ role: 'assistant', content: [part] });
  };

  for (const item of input) {
    const record = item as JsonObject & { type: string };
    const isOutput = record.type === 'function_call_output' || record.type === 'custom_tool_call_output';
    if (!isOutput) flushDeferred();
    const isSystem = record.type === 'message' && (record.role === 'developer' || record.role === 'system');
    if (!isSystem) leading = false;
    switch (record.type) {
      case 'message': {
        const text = messageText(record);
        if (record.role === 'assistant') {
          assistant(withOptions({ type: 'text', text }, record));
        } else if (isSystem && leading) {
          prompt.push({ role: 'system', content: text });
        } else if (isSystem) {
          prompt.push({ role: 'user', content: [{ type: 'text', text }] });
        } else {
          prompt.push({ role: 'user', content: userParts(record) });
        }
        break;
      }
      case 'reasoning': {
        const text = reasoningText(record);
        if (text !== '') assistant(withOptions({ type: 'reasoning', text }, record));
        break;
      }
      case 'function_call':
      case 'custom_tool_call': {
        const namespace = typeof record.namespace === 'string' ? record.namespace : undefined;
        const flatName = codeModeName(toolName(String(record.name), namespace));
        const callId = String(record.call_id);
        callNames.set(callId, flatName);
        let callInput: unknown;
        if (record.type === 'function_call') callInput = parseOr(String(record.arguments ?? ''));
        else if (options.customTools === 'openai') callInput = String(record.input ?? '');
        else callInput = { [customToolArgument(String(record.name))]: String(record.input ?? '') };
        assistant(withOptions({ type: 'tool-call', toolCallId: callId, toolName: flatName, input: callInput }, record));
        break;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const callId = String(record.call_id);
        const output = record.output as ToolOutputBody;
        const flatName = callNames.get(callId);
        if (flatName === undefined || answered.has(callId)) {
          const text = outputText(output);
          if (text !== '') deferred.push(text);
          break;
        }
        answered.add(callId);
        const part: ToolPart = { type: 'tool-result', toolCallId: callId, toolName: flatName, output: toResultOutput(output) };
        const last = prompt.at(-1);
        if (last?.role === 'tool') last.content.push(part);
        else prompt.push({ role: 'tool', content: [part] });
        break;
      }
      default:
        break;
    }
  }
  flushDeferred();
  return prompt;
}

function withOptions<T extends object>(part: T, record: JsonObject): T & { providerOptions?: SharedV4ProviderOptions } {
  const metadata = record[PROVIDER_METADATA_FIELD];
  return metadata && typeof metadata === 'object' ? { ...part, providerOptions: metadata as SharedV4ProviderOptions } : part;
}

function parseOr(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** A message item's text: its string content, or its text parts joined by newlines. */
export function messageText(record: JsonObject): string {
  if (typeof record.content === 'string') return record.content;
  if (!Array.isArray(record.content)) return '';
  return (record.content as JsonObject[])
    .filter((part) => (part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string')
    .map((part) => String(part.text))
    .join('\n');
}

/** A reasoning item's summary texts joined by newlines. */
export function reasoningText(record: JsonObject): string {
  const summary = Array.isArray(record.summary) ? (record.summary as JsonObject[]) : [];
  return summary
    .filter((part) => typeof part.text === 'string')
    .map((part) => String(part.text))
    .join('\n');
}

function userParts(record: JsonObject): Array<LanguageModelV4TextPart | LanguageModelV4FilePart> {
  if (typeof record.content === 'string') return [{ type: 'text', text: record.content }];
  const parts: Array<LanguageModelV4TextPart | LanguageModelV4FilePart> = [];
  for (const part of Array.isArray(record.content) ? (record.content as JsonObject[]) : []) {
    if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
    else if (part.type === 'input_image' && typeof part.image_url === 'string') parts.push(imagePart(part.image_url));
  }
  return parts;
}

/** A `data:` URL becomes inline bytes with its media type; any other URL is passed as a URL. */
function imagePart(url: string): LanguageModelV4FilePart {
  const data = /^data:([^;,]+)(;base64)?,(.*)$/s.exec(url);
  if (data) {
    const body = data[2] ? data[3]! : Buffer.from(decodeURIComponent(data[3]!)).toString('base64');
    return { type: 'file', mediaType: data[1]!, data: { type: 'data', data: body } };
  }
  return { type: 'file', mediaType: 'image', data: { type: 'url', url: new URL(url) } };
}

function outputText(output: ToolOutputBody): string {
  if (typeof output === 'string') return output;
  return (Array.isArray(output) ? output : [])
    .filter((item): item is Extract<ContentItem, { type: 'input_text' }> => item.type === 'input_text')
    .map((item) => item.text)
    .join('\n');
}

/** A Switchyard output body as an AI SDK tool result: text, or content parts with images as files. */
export function toResultOutput(output: ToolOutputBody): LanguageModelV4ToolResultOutput {
  if (typeof output === 'string') return { type: 'text', value: output };
  const items = Array.isArray(output) ? output : [];
  if (items.every((item) => item.type === 'input_text')) return { type: 'text', value: outputText(items) };
  return {
    type: 'content',
    value: items.map((item) => (item.type === 'input_text' ? { type: 'text' as const, text: item.text } : imagePart(item.image_url))),
  };
}
