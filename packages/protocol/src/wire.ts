import type { JsonObject } from './json';
import type { WireTool } from './tool-spec';

/** A text content item of a tool output or message (Responses API `input_text`). */
export interface InputTextItem {
  /** Discriminant. */
  type: 'input_text';
  /** The text. */
  text: string;
}

/**
 * An image content item (`input_image`). `image_url` is a `data:` URL or an https URL;
 * `detail` is `auto` | `low` | `high` | `original` and omitted when unset.
 */
export interface InputImageItem {
  /** Discriminant. */
  type: 'input_image';
  /** A `data:` URL or an https URL. */
  image_url: string;
  /** Resolution hint; omitted when unset. `original` is dropped unless the provider accepts it. */
  detail?: 'auto' | 'low' | 'high' | 'original';
}

/** One item of an output array. */
export type ContentItem = InputTextItem | InputImageItem;

/** A tool output's `output`: a plain string, or content items. */
export type ToolOutputBody = string | ContentItem[];

/** The model calls a function tool; `arguments` is a raw JSON string (may be malformed). */
export interface FunctionCallItem {
  /** Discriminant. */
  type: 'function_call';
  /** The model's id for the call; every answer (output item) carries the same value. */
  call_id: string;
  /** The function name, without namespace. */
  name: string;
  /** Present for namespaced tools (`clock`); absent for plain ones. */
  namespace?: string;
  /** The arguments' raw JSON text; malformed text is answered with a model-visible failure. */
  arguments: string;
  /** The item's own Responses-API id; used as the call id only when `call_id` is missing or empty. */
  id?: string;
}

/** The model calls a freeform tool with raw text. */
export interface CustomToolCallItem {
  /** Discriminant. */
  type: 'custom_tool_call';
  /** The model's id for the call; every answer (output item) carries the same value. */
  call_id: string;
  /** The tool name, without namespace. */
  name: string;
  /** Present for namespaced tools; absent for plain ones. */
  namespace?: string;
  /** The raw input text, handed to the tool verbatim. */
  input: string;
  /** The item's own Responses-API id; used as the call id only when `call_id` is missing or empty. */
  id?: string;
}

/**
 * The model searches deferred tools. Only `execution: "client"` is a tool call; server-side
 * searches are ignored by the router. `arguments` is an object (or a JSON string from some servers).
 */
export interface ToolSearchCallItem {
  /** Discriminant. */
  type: 'tool_search_call';
  /** The model's id for the call; every answer (output item) carries the same value. */
  call_id: string;
  /** `client` (Switchyard searches and answers) or `server` (the provider did; ignored). */
  execution: 'client' | 'server' | string;
  /** `{query, limit?}`; unreadable arguments are answered with a model-visible failure. */
  arguments: JsonObject | string;
  /** The item's own Responses-API id; used as the call id only when `call_id` is missing or empty. */
  id?: string;
}

/** Answer to a {@link FunctionCallItem}, matched by `call_id`. */
export interface FunctionCallOutputItem {
  /** Discriminant. */
  type: 'function_call_output';
  /** The `call_id` of the call this answers. */
  call_id: string;
  /** What the model reads: text or content items. */
  output: ToolOutputBody;
}

/** Answer to a {@link CustomToolCallItem} (also `notify()` injections, with the exec call id). */
export interface CustomToolCallOutputItem {
  /** Discriminant. */
  type: 'custom_tool_call_output';
  /** The `call_id` of the call this answers. */
  call_id: string;
  /** The tool's name, set on the extra outputs a Code Mode cell's `notify()` adds (`exec`), as the reference sends them. */
  name?: string;
  /** What the model reads: text or content items. */
  output: ToolOutputBody;
}

/** Answer to a {@link ToolSearchCallItem}: loadable specs the API adds to the model's context. */
export interface ToolSearchOutputItem {
  /** Discriminant. */
  type: 'tool_search_output';
  /** The `call_id` of the search this answers. */
  call_id: string;
  /** Always `completed` (failures and aborts answer an empty `tools`). */
  status: 'completed';
  /** Always `client`. */
  execution: 'client';
  /** The loadable specs found (functions and namespaces); empty on failure or abort. */
  tools: WireTool[];
}

/** A message in the conversation (user input, assistant text, developer context). */
export interface MessageItem {
  /** Discriminant. */
  type: 'message';
  /** Who speaks: `user`, `assistant`, or `developer`/`system` context (hook contexts are `developer`). */
  role: 'user' | 'assistant' | 'developer' | 'system';
  /** A string, or parts: `input_text`/`input_image` for input, `output_text` for assistant output. */
  content: string | Array<InputTextItem | InputImageItem | { type: 'output_text'; text: string }>;
  /** The item's Responses-API id, when the provider gave one. */
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
export type ResponseItem =
  | ToolCallItem
  | ToolOutputItem
  | MessageItem
  | (JsonObject & {
      /** The item's wire type (`reasoning`, `web_search_call`, …), kept as is. */
      type: string;
    });

/** True for the three items that are tool calls (a server-side `tool_search_call` included). */
export function isToolCallItem(item: { type?: unknown }): item is ToolCallItem {
  return item.type === 'function_call' || item.type === 'custom_tool_call' || item.type === 'tool_search_call';
}
