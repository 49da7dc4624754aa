import type { CallToolResult, ContentBlock, Tool } from '@modelcontextprotocol/server';
import type { ContentItem, JsonObject, ToolOutputItem } from '@switchyard/protocol';
import { truncateMiddle } from '@switchyard/kit';
import type { CodeModeDispatchResult, CodeModeToolDescriptions } from './serve';

const EXEC_PREAMBLE =
  'Pass the JavaScript source as the `code` argument (raw source; its first line may be the `// @exec:` pragma). ' +
  'The result is the script output: a status header ("Script completed", "Script failed", "Script terminated" or "Script running with cell ID …"), then the text and images the script produced.';

/** Parses a base64 `data:` URL into its MIME type and payload. */
function parseDataUrl(url: string): { mimeType: string; data: string } | undefined {
  const match = /^data:([^;,]*)((?:;[^;,]*)*);base64,([\s\S]*)$/i.exec(url);
  if (!match) return undefined;
  return { mimeType: match[1] || 'application/octet-stream', data: match[3] };
}

function contentItemToBlock(item: ContentItem): ContentBlock {
  if (item.type === 'input_text') return { type: 'text', text: item.text };
  const parsed = parseDataUrl(item.image_url);
  if (!parsed) return { type: 'resource_link', uri: item.image_url, name: 'image' };
  return {
    type: 'image',
    data: parsed.data,
    mimeType: parsed.mimeType,
    ...(item.detail ? { _meta: { 'codex/imageDetail': item.detail } } : {}),
  };
}

const FAILED_HEADER = 'Script failed';
const OK_HEADERS = ['Script completed', 'Script terminated', 'Script running with cell ID '];

/**
 * Whether an `exec` / `wait` output reports a failure, read from its wire shape: the `Script failed`
 * header, or a text without any status header (Code Mode's error surfaces that skip the header:
 * pragma, argument and service errors).
 */
export function isFailedCodeModeOutput(item: ToolOutputItem): boolean {
  if (item.type === 'tool_search_output') return false;
  const first = typeof item.output === 'string' ? item.output : item.output[0]?.type === 'input_text' ? item.output[0].text : '';
  if (first.startsWith(FAILED_HEADER)) return true;
  return !OK_HEADERS.some((header) => first.startsWith(header));
}

/**
 * Converts an `exec` / `wait` answer (an output item, or `{ item, success }`) into an MCP
 * `CallToolResult`: text becomes text content, `input_image` data URLs become image content (other
 * URLs a `resource_link`). `isError` is set when `success` is false, or, when `success` is not
 * given, when {@link isFailedCodeModeOutput}.
 */
export function toolOutputToCallToolResult(answer: ToolOutputItem | CodeModeDispatchResult): CallToolResult {
  const { item, success } = 'item' in answer ? answer : { item: answer, success: undefined };
  const failed = success === undefined ? isFailedCodeModeOutput(item) : !success;
  let content: ContentBlock[];
  if (item.type === 'tool_search_output') content = [{ type: 'text', text: JSON.stringify(item.tools) }];
  else if (typeof item.output === 'string') content = [{ type: 'text', text: item.output }];
  else content = item.output.map(contentItemToBlock);
  return failed ? { content, isError: true } : { content };
}

/** The `exec` and `wait` MCP tool definitions for a host's current descriptions. */
export function codeModeMcpToolDefinitions(descriptions: CodeModeToolDescriptions): Tool[] {
  const execDescription = typeof descriptions.exec.description === 'string' ? descriptions.exec.description : '';
  const waitDescription = typeof descriptions.wait.description === 'string' ? descriptions.wait.description : '';
  const waitParameters = (descriptions.wait as { parameters?: JsonObject }).parameters;
  return [
    {
      name: 'exec',
      description: `${EXEC_PREAMBLE}\n\n${execDescription}`,
      // A client that supports MCP Tasks may run a cell as a task (see serve-tasks.ts).
      execution: { taskSupport: 'optional' },
      inputSchema: {
        type: 'object',
        properties: { code: { type: 'string', description: 'JavaScript (or TypeScript) source of the cell.' } },
        required: ['code'],
        additionalProperties: false,
      },
    },
    {
      name: 'wait',
      description: waitDescription,
      inputSchema: (waitParameters?.type === 'object' ? waitParameters : { type: 'object', properties: {} }) as Tool['inputSchema'],
    },
  ];
}

/** An `isError` result with one text: a failure the model reads and may fix. */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/**
 * Caps a result at `maxBytes` of JSON: images are replaced by one-line notes (last first), then
 * the longest text is cut in the middle (with the `…N tokens truncated…` marker) until it fits, and
 * a closing note says so. A result that fits is returned unchanged.
 */
export function capCallToolResult(result: CallToolResult, maxBytes: number): CallToolResult {
  let size = jsonBytes(result);
  if (size <= maxBytes) return result;
  const note = `[this result was ${size} bytes, over the ${maxBytes}-byte cap of the server (maxResultBytes); it was shortened]`;
  const content: ContentBlock[] = [...result.content, { type: 'text', text: note }];
  const measure = () => jsonBytes({ ...result, content });
  for (let index = content.length - 1; index >= 0 && size > maxBytes; index--) {
    const block = content[index];
    if (block.type !== 'image' && block.type !== 'audio') continue;
    content[index] = { type: 'text', text: `[${block.type} omitted: ${block.data.length} characters of base64 over the result cap]` };
    size = measure();
  }
  for (let round = 0; size > maxBytes && round < 16; round++) {
    let longest = -1;
    for (let index = 0; index < content.length - 1; index++) {
      const block = content[index];
      if (block.type === 'text' && (longest < 0 || block.text.length > (content[longest] as { text: string }).text.length)) longest = index;
    }
    if (longest < 0) break;
    const text = (content[longest] as { text: string }).text;
    const raw = Buffer.byteLength(text);
    // JSON escaping makes a text longer on the wire; shrink by the excess scaled by that factor.
    const expansion = Buffer.byteLength(JSON.stringify(text)) / Math.max(1, raw);
    const keepBytes = Math.max(0, raw - Math.ceil((size - maxBytes + 256) / expansion));
    content[longest] = { type: 'text', text: truncateMiddle(text, Math.floor(keepBytes / 4)).text };
    size = measure();
  }
  return { ...result, content };
}
