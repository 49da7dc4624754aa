import {
  MCP_RESULT_SCHEMA_MARKER,
  isJsonObject,
  type ContentItem,
  type ToolFailureCode,
  type JsonObject,
  type JsonSchema,
  type JsonValue,
  type ToolOutput,
  type ToolOutputBody,
  type ToolOutputItem,
  type ToolPayload,
} from '@switchyard/protocol';
import { DEFAULT_OUTPUT_TOKENS, truncateContentItems, truncateMiddle } from '@switchyard/kit';
import { contentItemsToText, previewText } from '@switchyard/kit/internal';

/**
 * An MCP `CallToolResult` as a Code Mode cell receives it: `content` blocks as the server sent
 * them, `structuredContent` when the server sent it, and `isError` (always present, `false` unless
 * the server reported an error). `_meta` is removed.
 */
export interface McpCallToolResult {
  [key: string]: JsonValue | undefined;
  content: JsonValue[];
  structuredContent?: JsonObject;
  isError: boolean;
}

/**
 * Normalizes a raw `tools/call` result: keeps `content` (an array, `[]` when absent),
 * `structuredContent` (objects only) and `isError` (boolean), drops `_meta` and anything else.
 */
export function normalizeCallToolResult(raw: unknown): McpCallToolResult {
  const value = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const content = Array.isArray(value.content) ? (value.content as JsonValue[]) : [];
  const structured = value.structuredContent;
  const hasStructured = typeof structured === 'object' && structured !== null && !Array.isArray(structured);
  return {
    content,
    ...(hasStructured ? { structuredContent: structured as JsonObject } : {}),
    isError: value.isError === true,
  };
}

/** An error result carrying one text block (how a failed call reaches the model and a cell). */
export function errorCallToolResult(text: string): McpCallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** A compiled output-schema check (the SDK's ajv validator): `valid`, or why not. */
export type StructuredContentCheck = (structured: unknown) => { valid: boolean; errorMessage?: string };

/**
 * Checks a successful result against the tool's output schema, as the MCP spec asks clients to
 * (and the SDK's `Client.callTool` does): a result without `structuredContent`, or with one the
 * schema refuses, becomes an error result whose first text says why, followed by the content the
 * server sent. Error results and tools without an output schema pass unchanged.
 */
export function checkStructuredContent(result: McpCallToolResult, check: StructuredContentCheck | undefined): McpCallToolResult {
  if (!check || result.isError) return result;
  let problem: string | undefined;
  if (result.structuredContent === undefined) problem = 'the tool has an output schema but its result has no structured content';
  else {
    const verdict = check(result.structuredContent);
    if (!verdict.valid) problem = `the structured content does not match the tool's output schema: ${verdict.errorMessage ?? 'invalid'}`;
  }
  if (problem === undefined) return result;
  return { content: [{ type: 'text', text: `tool call error: ${problem}` }, ...result.content], isError: true };
}

/**
 * The Code Mode output schema of an MCP tool: the `CallToolResult` envelope with the server's
 * `outputSchema` (or `{}`) as `structuredContent`, marked with `MCP_RESULT_SCHEMA_MARKER: true`. The broker
 * renders it as `CallToolResult<T>` with the shared MCP types block.
 */
export function mcpCallToolResultOutputSchema(structuredContentSchema: JsonSchema = {}): JsonSchema {
  return {
    [MCP_RESULT_SCHEMA_MARKER]: true,
    type: 'object',
    properties: {
      content: { type: 'array', items: { type: 'object' } },
      structuredContent: structuredContentSchema,
      isError: { type: 'boolean' },
      _meta: { type: 'object' },
    },
    required: ['content'],
    additionalProperties: false,
  };
}

function contentBlockToItem(block: JsonValue): { item: ContentItem; image: boolean } {
  if (typeof block === 'object' && block !== null && !Array.isArray(block)) {
    if (block.type === 'text' && typeof block.text === 'string') return { item: { type: 'input_text', text: block.text }, image: false };
    if (block.type === 'image' && typeof block.data === 'string') {
      const mime = typeof block.mimeType === 'string' ? block.mimeType : typeof block.mime_type === 'string' ? block.mime_type : 'application/octet-stream';
      const url = block.data.startsWith('data:') ? block.data : `data:${mime};base64,${block.data}`;
      return { item: { type: 'input_image', image_url: url }, image: true };
    }
  }
  return { item: { type: 'input_text', text: JSON.stringify(block) }, image: false };
}

/** The note a body gets when its result links resources the model can read. */
export function resourceLinkNote(server: string): string {
  return `Read a linked resource with \`read_mcp_resource\` ({"server":${JSON.stringify(server)},"uri":"<its uri>"}).`;
}

/**
 * The model-visible body of a result. Content blocks are what a server writes for the model, so
 * they always reach it: content items when any block is an image (text blocks as `input_text`,
 * images as `data:` URLs, other blocks as their JSON), else the JSON of the `content` array. Only a
 * result with no content blocks shows its `structuredContent` (as JSON); a cell receives both.
 * With `resourceServer`, a result holding `resource_link` blocks ends with {@link resourceLinkNote}.
 */
export function callToolResultBody(result: McpCallToolResult, resourceServer?: string): ToolOutputBody {
  if (result.content.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  const note =
    resourceServer !== undefined && result.content.some((block) => isJsonObject(block) && block.type === 'resource_link') ? resourceLinkNote(resourceServer) : undefined;
  const converted = result.content.map(contentBlockToItem);
  if (converted.some((entry) => entry.image)) {
    const items = converted.map((entry) => entry.item);
    return note === undefined ? items : [...items, { type: 'input_text', text: note }];
  }
  const text = JSON.stringify(result.content);
  return note === undefined ? text : `${text}\n${note}`;
}

/** Formats elapsed milliseconds the way the header does: seconds with four decimals. */
export function formatWallTime(elapsedMs: number): string {
  return (Math.max(0, elapsedMs) / 1000).toFixed(4);
}

/** Options of {@link McpToolOutput}. */
export interface McpToolOutputOptions {
  /** Milliseconds the call took (the `Wall time` header). */
  wallTimeMs: number;
  /** Token budget before the ×1.2 margin. Default 10 000. */
  maxOutputTokens?: number;
  /** The server whose `resource_link` blocks `read_mcp_resource` can read (adds the note). */
  resourceServer?: string;
  /** For an error result this client made: what kind of failure (`TIMEOUT` when the call ran out of time). */
  failureCode?: ToolFailureCode;
}

/**
 * The output of one MCP tool call. The model reads `Wall time: X seconds` + `Output:` + the
 * result body, truncated to the budget ×1.2; a Code Mode cell and PostToolUse hooks get the
 * {@link McpCallToolResult} itself. `success` is false for an error result, but a cell's promise
 * still resolves with it (see `codeModeAlwaysResolves`).
 */
export class McpToolOutput implements ToolOutput {
  readonly result: McpCallToolResult;
  readonly success: boolean;
  readonly wallTimeMs: number;
  /**
   * Marks that Code Mode must resolve (never reject) with {@link codeModeResult}, even when
   * `success` is false: an MCP error result is data a script inspects (`isError`).
   */
  readonly codeModeAlwaysResolves = true as const;
  /** `TIMEOUT` for a call that ran out of time (PostToolUseFailure hooks' `error_code`). */
  readonly failureCode?: ToolFailureCode;
  private readonly body: ToolOutputBody;

  constructor(result: McpCallToolResult, options: McpToolOutputOptions) {
    this.result = result;
    this.success = !result.isError;
    if (result.isError && options.failureCode) this.failureCode = options.failureCode;
    this.wallTimeMs = options.wallTimeMs;
    const budget = Math.floor((options.maxOutputTokens ?? DEFAULT_OUTPUT_TOKENS) * 1.2);
    const header = `Wall time: ${formatWallTime(options.wallTimeMs)} seconds\nOutput:`;
    const body = callToolResultBody(result, options.resourceServer);
    if (typeof body === 'string') {
      this.body = truncateMiddle(body === '' ? header : `${header}\n${body}`, budget).text;
    } else {
      this.body = truncateContentItems([{ type: 'input_text', text: header }, ...body], budget);
    }
  }

  toResponseItem(callId: string, _payload: ToolPayload): ToolOutputItem {
    return { type: 'function_call_output', call_id: callId, output: this.body };
  }

  codeModeResult(_payload: ToolPayload): JsonValue {
    return this.result as unknown as JsonValue;
  }

  postToolUseResponse(_payload: ToolPayload): JsonValue {
    return this.result as unknown as JsonValue;
  }

  logPreview(): string {
    return previewText(typeof this.body === 'string' ? this.body : contentItemsToText(this.body));
  }
}
