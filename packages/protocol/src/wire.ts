import type { JsonObject } from './json';
import type { WireTool } from './tool-spec';

/** A text content item of a tool output or message (Responses API `input_text`). */
export interface InputTextItem {
  type: 'input_text';
  text: string;
}

/**
 * An image content item (`input_image`). `image_url` is a `data:` URL or an https URL;
 * `detail` is `auto` | `low` | `high` | `original` and omitted when unset.
 */
export interface InputImageItem {
  type: 'input_image';
  image_url: string;
  detail?: 'auto' | 'low' | 'high' | 'original';
}

/** One item of an output array. */
export type ContentItem = InputTextItem | InputImageItem;

/** A tool output's `output`: a plain string, or content items. */
export type ToolOutputBody = string | ContentItem[];

/** The model calls a function tool; `arguments` is a raw JSON string (may be malformed). */
export interface FunctionCallItem {
  type: 'function_call';
  call_id: string;
  name: string;
  /** Present for namespaced tools (`clock`); absent for plain ones. */
  namespace?: string;
  arguments: string;
  id?: string;
}

/** The model calls a freeform tool with raw text. */
export interface CustomToolCallItem {
  type: 'custom_tool_call';
  call_id: string;
  name: string;
  namespace?: string;
  input: string;
  id?: string;
}

/**
 * The model searches deferred tools. Only `execution: "client"` is a tool call; server-side
 * searches are ignored by the router. `arguments` is an object (or a JSON string from some servers).
 */
export interface ToolSearchCallItem {
  type: 'tool_search_call';
  call_id: string;
  execution: 'client' | 'server' | string;
  arguments: JsonObject | string;
  id?: string;
}

/** Answer to a {@link FunctionCallItem}, matched by `call_id`. */
export interface FunctionCallOutputItem {
  type: 'function_call_output';
  call_id: string;
  output: ToolOutputBody;
}

/** Answer to a {@link CustomToolCallItem} (also `notify()` injections, with the exec call id). */
export interface CustomToolCallOutputItem {
  type: 'custom_tool_call_output';
  call_id: string;
  output: ToolOutputBody;
}

/** Answer to a {@link ToolSearchCallItem}: loadable specs the API adds to the model's context. */
export interface ToolSearchOutputItem {
  type: 'tool_search_output';
  call_id: string;
  status: 'completed';
  execution: 'client';
  tools: WireTool[];
}

/** A message in the conversation (user input, assistant text, developer context). */
export interface MessageItem {
  type: 'message';
  role: 'user' | 'assistant' | 'developer' | 'system';
  content: string | Array<InputTextItem | InputImageItem | { type: 'output_text'; text: string }>;
  id?: string;
}

/** Any item the model may emit that is a tool call. */
export type ToolCallItem = FunctionCallItem | CustomToolCallItem | ToolSearchCallItem;

/** Any item a tool call is answered with. */
export type ToolOutputItem = FunctionCallOutputItem | CustomToolCallOutputItem | ToolSearchOutputItem;

/**
 * Any Responses-API item Switchyard reads or writes. Unknown item types (reasoning, web search
 * calls) pass through as opaque objects: the router ignores them, the session keeps them in history.
 */
export type ResponseItem = ToolCallItem | ToolOutputItem | MessageItem | (JsonObject & { type: string });

/** True for the three items that are tool calls (a server-side `tool_search_call` included). */
export function isToolCallItem(item: { type?: unknown }): item is ToolCallItem {
  return item.type === 'function_call' || item.type === 'custom_tool_call' || item.type === 'tool_search_call';
}

/** Creates an `input_text` item. */
export function inputText(text: string): InputTextItem {
  return { type: 'input_text', text };
}
