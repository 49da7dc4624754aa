import { augmentCodeModeDescription, codeModeDeclaration, isMcpOutputSchema, type CodeModeSurface, type JsonSchema, type NestedToolDefinition } from '@switchyard/protocol';

/** The Lark grammar of `exec`: an optional first-line pragma, then JavaScript source. */
export const EXEC_GRAMMAR = [
  'start: pragma_source | plain_source',
  'pragma_source: PRAGMA_LINE NEWLINE SOURCE',
  'plain_source: SOURCE',
  'PRAGMA_LINE: /[ \\t]*\\/\\/ @exec:[^\\r\\n]*/',
  'NEWLINE: /\\r?\\n/',
  'SOURCE: /[\\s\\S]+/',
].join('\n');

const EXEC_TEMPLATE = `Run JavaScript to call tools. Your code is evaluated in a fresh V8 isolate as an async module, so top-level \`await\` works.
- All nested tools are functions on the global \`tools\` object, for example \`await tools.exec_command({ cmd: "ls" })\`. Tool names are normalized to JavaScript identifiers, for example \`tools.mcp__ologs__get_profile(...)\`.
- A nested tool takes an object (function tools) or a string (freeform tools) and returns an object or a string, as its description says. A failed call rejects with a string.
- The environment is raw JavaScript -- no Node, no file system, no network access, no console.
- Send raw JavaScript source: not JSON, not a quoted string, not a markdown code fence.
- Optional first line pragma: \`// @exec: {"yield_time_ms": 10000, "max_output_tokens": 1000}\`. \`yield_time_ms\` makes exec return early with "Script running with cell ID …" while the script keeps running (defaults to 10000 ms); use \`wait\` with that cell ID to see more. \`max_output_tokens\` is the token budget for this result (default 10000).
- When the module finishes, the isolate ends and unawaited promises are silently discarded.
Globals:
- \`text(value)\`: append text to the output (objects are JSON-encoded).
- \`image(urlOrItem, detail?)\`: append an image (a data: URL, or an item with \`image_url\` and \`detail\`).
- \`store(key, value)\` / \`load(key)\`: keep JSON values across exec calls of this session.
- \`notify(text)\`: send a note to the model right away, while the script keeps running.
- \`yield_control()\`: return the output so far now and keep running in the background.
- \`exit()\`: end the script successfully.
- \`setTimeout(fn, ms)\` / \`clearTimeout(id)\`: timers (they do not keep the script alive).
- \`ALL_TOOLS\`: an array of \`{ name, description }\` for every nested tool.`;

const DEFERRED_NOTE = `Some nested tools are not described here to save space (they are loaded on demand), but they are still on \`tools\` and listed in \`ALL_TOOLS\`. Find them by filtering \`ALL_TOOLS\` by \`name\` and \`description\`.`;

/** The shared TypeScript types of MCP tool results (added once when an output schema is MCP-shaped). */
export const MCP_TYPES = `Shared MCP Types:
\`\`\`ts
type TextContent = { type: "text"; text: string; annotations?: unknown; _meta?: unknown; };
type ImageContent = { type: "image"; data: string; mimeType: string; annotations?: unknown; _meta?: unknown; };
type AudioContent = { type: "audio"; data: string; mimeType: string; annotations?: unknown; _meta?: unknown; };
type ResourceLink = { type: "resource_link"; uri: string; name: string; description?: string; mimeType?: string; };
type EmbeddedResource = { type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string; }; };
type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;
type CallToolResult<TStructured = { [key: string]: unknown; }> = { content: Array<ContentBlock>; structuredContent?: TStructured; isError?: boolean; _meta?: unknown; };
\`\`\``;

/** The TypeScript declaration line of one nested tool. */
export function toolDeclaration(tool: NestedToolDefinition): string {
  return codeModeDeclaration(tool);
}

/** The description a nested tool has in `ALL_TOOLS` and the `exec` description: its text plus its declaration. */
export function augmentedDescription(tool: NestedToolDefinition): string {
  return augmentCodeModeDescription(tool);
}

/** The raw (not yet normalized) code-mode name, shown in parentheses when it differs. */
function rawName(tool: NestedToolDefinition): string {
  const { name, namespace } = tool.toolName;
  if (!namespace) return name;
  return namespace.endsWith('_') || name.startsWith('_') ? namespace + name : `${namespace}__${name}`;
}

/** The nested-tool reference (code-mode-only): namespace sections and one heading per tool. */
export function nestedToolReference(tools: readonly NestedToolDefinition[]): string {
  const described = tools
    .filter((tool) => !tool.deferred)
    .slice()
    .sort((a, b) => cmp(a.toolName.namespace ?? '', b.toolName.namespace ?? '') || cmp(a.toolName.name, b.toolName.name) || cmp(a.codeModeName, b.codeModeName));
  const seen = new Set<string>();
  const parts: string[] = [];
  let namespace: string | undefined;
  for (const tool of described) {
    const raw = rawName(tool);
    if (seen.has(raw)) continue;
    seen.add(raw);
    if (tool.toolName.namespace !== namespace) {
      namespace = tool.toolName.namespace;
      if (namespace && tool.namespaceDescription?.trim()) parts.push(`## ${namespace}\n${tool.namespaceDescription.trim()}`);
    }
    const heading = raw === tool.codeModeName ? `### \`${tool.codeModeName}\`` : `### \`${tool.codeModeName}\` (${raw})`;
    parts.push(`${heading}\n${augmentedDescription(tool)}`);
  }
  return parts.join('\n\n');
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The `exec` description for a step's surface: the template; in `code-mode-only` also the
 * deferred-tools note, the shared MCP types (when an output schema is MCP-shaped) and the nested-tool reference.
 */
export function execDescription(surface: CodeModeSurface): string {
  const sections = [EXEC_TEMPLATE];
  if (surface.mode === 'code-mode-only') {
    if (surface.hasDeferredTools) sections.push(DEFERRED_NOTE);
    if (surface.tools.some((tool) => isMcpOutputSchema(tool.outputSchema))) sections.push(MCP_TYPES);
    const reference = nestedToolReference(surface.tools);
    if (reference) sections.push(reference);
  }
  return sections.join('\n\n');
}

/** The `wait` description (reference/code-mode.md §1.5). */
export const WAIT_DESCRIPTION = `Waits on a yielded \`exec\` cell and returns new output or completion.
- Use \`wait\` only after \`exec\` returns "Script running with cell ID ...".
- It returns only the new output since the last yield, or the final completion or termination result.
- It may yield again with the same \`cell_id\`; call \`wait\` again to keep observing.
- If the cell has already finished, it returns the completed result and closes the cell.
- \`terminate: true\` stops the running cell.`;

/** The `wait` parameters. */
export const WAIT_PARAMETERS: JsonSchema = {
  type: 'object',
  properties: {
    cell_id: { type: 'string', description: 'Identifier of the running exec cell.' },
    yield_time_ms: { type: 'number', description: 'How long to wait (in milliseconds) for more output before yielding again. Defaults to 10000.' },
    max_tokens: { type: 'number', description: 'Output token budget for this wait call only. Defaults to 10000.' },
    terminate: { type: 'boolean', description: 'Whether to stop the running cell instead of waiting.' },
  },
  required: ['cell_id'],
  additionalProperties: false,
};
