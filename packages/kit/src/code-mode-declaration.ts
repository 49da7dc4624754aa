import { MCP_RESULT_SCHEMA_MARKER, type JsonSchema } from '@switchyard/protocol';
import { createTypeScope, renderSchemaType, TooLargeToRender, type TypeScope } from './schema-typescript';
import { safeToolText } from './tool-text';

// Code Mode declarations, shared by the planner (visible descriptions in `code-mode`) and the
// broker (`exec` description, `ALL_TOOLS`) so both always render the same text.

/** The most characters one tool's declaration may take; past it its types are shown as `unknown`, with a note. */
const MAX_DECLARATION_CHARS = 20_000;

/**
 * True when an output schema describes an MCP `CallToolResult`: marked with `MCP_RESULT_SCHEMA_MARKER`,
 * or with an array `content` property and an `isError` property.
 */
export function isMcpOutputSchema(schema: JsonSchema | undefined): boolean {
  if (!schema || typeof schema !== 'object') return false;
  if (schema[MCP_RESULT_SCHEMA_MARKER] === true) return true;
  const content = schema.properties?.content as JsonSchema | undefined;
  return !!content && content.type === 'array' && !!schema.properties && 'isError' in schema.properties;
}

/**
 * The result type of a nested tool: `CallToolResult<T>` for MCP-shaped schemas, the rendered schema, or `unknown`.
 * `T` is the `structuredContent` schema rendered as a schema of its own: an MCP tool's `outputSchema` describes the
 * structured content alone, so its local `$ref`s (`#/definitions/…`, `#/$defs/…`) point into it, not into the
 * `CallToolResult` envelope around it.
 */
function outputType(schema: JsonSchema | undefined, scope: TypeScope): string {
  if (!schema) return 'unknown';
  if (isMcpOutputSchema(schema)) {
    const structured = schema.properties?.structuredContent as JsonSchema | undefined;
    const rendered = structured === undefined ? 'unknown' : renderSchemaType(structured, scope);
    return rendered === 'unknown' ? 'CallToolResult' : `CallToolResult<${rendered}>`;
  }
  return renderSchemaType(schema, scope);
}

/** What a Code Mode declaration needs to know about one tool. */
export interface CodeModeDeclarationInput {
  /** The tool's own description. */
  description: string;
  /** The JS identifier under `tools.`. */
  codeModeName: string;
  /** `function` tools take `args`, `freeform` tools `input: string`. */
  kind: 'function' | 'freeform';
  /**
   * JSON Schema of the arguments (function tools), rendered as the `args` type; absent → `unknown`. Ignored for
   * freeform tools.
   */
  inputSchema?: JsonSchema;
  /**
   * JSON Schema of the result, rendered as the promise's type (`CallToolResult<T>` for MCP-shaped schemas);
   * absent → `unknown`.
   */
  outputSchema?: JsonSchema;
}

/** The declaration with its named types, or `undefined` when it is past {@link MAX_DECLARATION_CHARS}. */
function renderDeclaration(tool: CodeModeDeclarationInput, withArgs: boolean, withResult: boolean): string | undefined {
  const scope = createTypeScope();
  try {
    const input = tool.kind === 'freeform' ? 'input: string' : `args: ${withArgs && tool.inputSchema !== undefined ? renderSchemaType(tool.inputSchema, scope) : 'unknown'}`;
    const output = withResult ? outputType(tool.outputSchema, scope) : 'unknown';
    const text = [...scope.aliases, `declare const tools: { ${tool.codeModeName}(${input}): Promise<${output}>; };`].join('\n');
    return text.length <= MAX_DECLARATION_CHARS ? text : undefined;
  } catch (error) {
    if (error instanceof TooLargeToRender) return undefined;
    throw error;
  }
}

/**
 * `declare const tools: { name(args: T): Promise<O>; };` for one nested tool, after the `type`
 * lines of the named types its schemas use. Bounded: a declaration past
 * {@link MAX_DECLARATION_CHARS} characters (or whose schemas have more than 20,000 nodes) shows its
 * result type as `unknown`, then its argument type too, after a comment saying so.
 */
export function codeModeDeclaration(tool: CodeModeDeclarationInput): string {
  const full = renderDeclaration(tool, true, true);
  if (full !== undefined) return full;
  const note = `// The types of this tool are too large to show here (a declaration shows at most ${MAX_DECLARATION_CHARS} characters); read its description.`;
  const argsOnly = renderDeclaration(tool, true, false);
  if (argsOnly !== undefined && argsOnly.length + note.length < MAX_DECLARATION_CHARS) return `${note}\n${argsOnly}`;
  return `${note}\n${renderDeclaration(tool, false, false)}`;
}

/**
 * The description a tool has in Code Mode — visible specs in `code-mode`, `ALL_TOOLS` and the
 * `exec` reference: its text (line terminators normalised, fences escaped: {@link safeToolText}),
 * then "exec tool declaration:" and the TypeScript block.
 */
export function augmentCodeModeDescription(tool: CodeModeDeclarationInput): string {
  return `${safeToolText(tool.description)}\n\nexec tool declaration:\n\`\`\`ts\n${codeModeDeclaration(tool)}\n\`\`\``;
}
