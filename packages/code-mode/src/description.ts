import type { CodeModeSurface, JsonSchema, NestedToolDefinition } from '@switchyard/protocol';
import {
  DEFAULT_TOOL_BUDGET_TOKENS,
  augmentCodeModeDescription,
  codeModeDeclaration,
  createPriorityRanker,
  estimateTokens,
  isMcpOutputSchema,
  safeToolText,
  selectWithinBudget,
} from '@switchyard/kit/internal';

/**
 * The Lark grammar of `exec`: an optional first-line pragma, then JavaScript source — byte for byte
 * the reference's text, its leading, inner and trailing blank lines included.
 */
export const EXEC_GRAMMAR = [
  '',
  'start: pragma_source | plain_source',
  'pragma_source: PRAGMA_LINE NEWLINE SOURCE',
  'plain_source: SOURCE',
  '',
  'PRAGMA_LINE: /[ \\t]*\\/\\/ @exec:[^\\r\\n]*/',
  'NEWLINE: /\\r?\\n/',
  'SOURCE: /[\\s\\S]+/',
  '',
].join('\n');

const EXEC_TEMPLATE = `Run JavaScript to call tools. Your code is evaluated in a fresh V8 isolate as an async module, so top-level \`await\` works.
- All nested tools are functions on the global \`tools\` object, for example \`await tools.exec_command({ cmd: "ls" })\`. Tool names are normalized to JavaScript identifiers, for example \`tools.mcp__ologs__get_profile(...)\`.
- A nested tool takes an object (function tools) or a string (freeform tools) and returns an object or a string, as its description says. A failed call rejects with an \`Error\` whose \`message\` is the failure text.
- The environment is raw JavaScript -- no Node, no file system, no network access.
- Send raw JavaScript source: not JSON, not a quoted string, not a markdown code fence.
- You may optionally start the tool input with a first-line pragma like \`// @exec: {"yield_time_ms": 10000, "max_output_tokens": 1000}\`.
- \`yield_time_ms\` asks \`exec\` to yield early if the script is still running (it answers "Script running with cell ID …"; use \`wait\` with that cell ID to see more). Defaults to 10000 ms.
- \`max_output_tokens\` sets the token budget for direct \`exec\` results. Defaults to 10000 tokens.
- When the module finishes, the isolate ends and unawaited promises are silently discarded.
Globals:
- \`text(value)\`: append text to the output (objects are JSON-encoded).
- \`console.log(...values)\` (and \`info\`, \`warn\`, \`error\`, \`debug\`): like \`text\`, the values joined by spaces.
- \`image(urlOrItem, detail?)\`: append an image (a data: URL, or an item with \`image_url\` and \`detail\`).
- \`generatedImage(result: { image_url: string; output_hint?: string })\`: append an image-generation result and its optional output hint. HTTP(S) URLs are not supported.
- \`store(key, value)\` / \`load(key)\`: keep JSON values across exec calls of this session.
- \`notify(text)\`: send a note to the model right away, while the script keeps running.
- \`yield_control()\`: return the output so far now and keep running in the background.
- \`exit()\`: end the script successfully.
- \`setTimeout(fn, ms)\` / \`clearTimeout(id)\`: timers (they do not keep the script alive).
- \`ALL_TOOLS\`: an array of \`{ name, description, declaration }\` for every nested tool, described here or not; \`declaration\` is its TypeScript declaration, e.g. \`text(ALL_TOOLS.filter((t) => /invoice/.test(t.name)).map((t) => t.declaration).join("\\n"))\`.`;

/** Codex's deferred-tools note: the tools `tool_search` would load are still callable, found through `ALL_TOOLS`. */
const DEFERRED_NOTE = `Some deferred nested tools may be omitted from this description. They are still available on the global \`tools\` object and listed in \`ALL_TOOLS\`.
To find one, filter \`ALL_TOOLS\` by \`name\` and \`description\`.`;

/**
 * How a cell searches the nested tools (`tools.tool_search`, planned when some nested tool is
 * deferred): follows the deferred-tools note, and the note of a description the budget cut.
 */
export const SEARCH_NOTE =
  'Or search them: `await tools.tool_search({ query, limit })` returns `{ tools: [{ name, description, declaration }] }`, best match first (a tool whose exact name is in `query` comes first); every tool found is on `tools`, so the same script can call it.';

/** The deferred-tools note, with the search note when cells can search. */
function deferredNote(surface: CodeModeSurface): string {
  return surface.toolSearch ? `${DEFERRED_NOTE}\n${SEARCH_NOTE}` : DEFERRED_NOTE;
}

/**
 * The shared TypeScript types of MCP tool results, added once when any nested tool (described or
 * deferred) has an MCP-shaped output schema, so every `CallToolResult<T>` declaration, including
 * one the model finds later in `ALL_TOOLS`, has its types. Codex's text, which follows the MCP
 * schema's CallToolResult (https://modelcontextprotocol.io/specification/draft/schema#calltoolresult).
 */
export const MCP_TYPES = `Shared MCP Types:
\`\`\`ts
type Role = "user" | "assistant";
type MetaObject = Record<string, unknown>;
type Annotations = {
  audience?: Role[];
  priority?: number;
  lastModified?: string;
};
type Icon = {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: "light" | "dark";
};
type TextResourceContents = {
  uri: string;
  mimeType?: string;
  _meta?: MetaObject;
  text: string;
};
type BlobResourceContents = {
  uri: string;
  mimeType?: string;
  _meta?: MetaObject;
  blob: string;
};
type TextContent = {
  type: "text";
  text: string;
  annotations?: Annotations;
  _meta?: MetaObject;
};
type ImageContent = {
  type: "image";
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: MetaObject;
};
type AudioContent = {
  type: "audio";
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: MetaObject;
};
type ResourceLink = {
  icons?: Icon[];
  name: string;
  title?: string;
  uri: string;
  description?: string;
  mimeType?: string;
  annotations?: Annotations;
  size?: number;
  _meta?: MetaObject;
  type: "resource_link";
};
type EmbeddedResource = {
  type: "resource";
  resource: TextResourceContents | BlobResourceContents;
  annotations?: Annotations;
  _meta?: MetaObject;
};
type ContentBlock =
  | TextContent
  | ImageContent
  | AudioContent
  | ResourceLink
  | EmbeddedResource;
type CallToolResult<TStructured = { [key: string]: unknown }> = {
  _meta?: MetaObject;
  content: ContentBlock[];
  isError?: boolean;
  structuredContent?: TStructured;
  [key: string]: unknown;
};
\`\`\``;

/** Rendered declarations and descriptions by definition object (the planner hands out the same definitions while a tool is unchanged). */
const declarationMemo = new WeakMap<NestedToolDefinition, string>();
const augmentedMemo = new WeakMap<NestedToolDefinition, string>();

/** The TypeScript declaration line of one nested tool (also `ALL_TOOLS[i].declaration`). */
export function toolDeclaration(tool: NestedToolDefinition): string {
  return remembered(declarationMemo, tool, codeModeDeclaration);
}

/** The description a nested tool has in `ALL_TOOLS` and the `exec` description: its text plus its declaration. */
export function augmentedDescription(tool: NestedToolDefinition): string {
  return remembered(augmentedMemo, tool, augmentCodeModeDescription);
}

/** `memo`'s text for `tool`, rendered by `render` the first time. */
function remembered(memo: WeakMap<NestedToolDefinition, string>, tool: NestedToolDefinition, render: (tool: NestedToolDefinition) => string): string {
  let text = memo.get(tool);
  if (text === undefined) {
    text = render(tool);
    memo.set(tool, text);
  }
  return text;
}

/** The raw (not yet normalized) code-mode name, shown in parentheses when it differs. */
function rawName(tool: NestedToolDefinition): string {
  const { name, namespace } = tool.toolName;
  if (!namespace) return name;
  return namespace.endsWith('_') || name.startsWith('_') ? namespace + name : `${namespace}__${name}`;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Tools in reference order (by namespace, name, code-mode name), one per raw name. */
function referenceOrder(tools: readonly NestedToolDefinition[]): NestedToolDefinition[] {
  const sorted = tools
    .slice()
    .sort((a, b) => cmp(a.toolName.namespace ?? '', b.toolName.namespace ?? '') || cmp(a.toolName.name, b.toolName.name) || cmp(a.codeModeName, b.codeModeName));
  const seen = new Set<string>();
  return sorted.filter((tool) => {
    const raw = rawName(tool);
    if (seen.has(raw)) return false;
    seen.add(raw);
    return true;
  });
}

function toolSection(tool: NestedToolDefinition): string {
  const raw = rawName(tool);
  const heading = raw === tool.codeModeName ? `### \`${tool.codeModeName}\`` : `### \`${tool.codeModeName}\` (${raw})`;
  return `${heading}\n${augmentedDescription(tool)}`;
}

/** "## namespace\ndescription", printed when the namespace changes (none for a blank description). */
function namespaceSection(tool: NestedToolDefinition): string | undefined {
  const namespace = tool.toolName.namespace;
  // the namespace's text (an MCP server's instructions) is the tool's: terminators normalised, fences escaped
  return namespace && tool.namespaceDescription?.trim() ? `## ${namespace}\n${safeToolText(tool.namespaceDescription.trim())}` : undefined;
}

function renderReference(described: readonly NestedToolDefinition[]): string {
  const parts: string[] = [];
  let namespace: string | undefined;
  for (const tool of described) {
    if (tool.toolName.namespace !== namespace) {
      namespace = tool.toolName.namespace;
      const section = namespaceSection(tool);
      if (section) parts.push(section);
    }
    parts.push(toolSection(tool));
  }
  return parts.join('\n\n');
}

/** The nested-tool reference (code-mode-only): namespace sections and one heading per non-deferred tool. */
export function nestedToolReference(tools: readonly NestedToolDefinition[]): string {
  return renderReference(referenceOrder(tools.filter((tool) => !tool.deferred)));
}

/**
 * The catalog line of an `exec` description that describes every tool it may: "complete (N tools)"
 * when every nested tool is described (10 o200k tokens), else "N of M" (the others are deferred,
 * and the deferred-tools note follows). The same tools always give the same line.
 */
function catalogLine(described: number, total: number): string {
  if (described < total) return `Tool catalog: ${described} of ${total} nested tools are described below.`;
  return `Tool catalog: complete (${total === 0 ? 'no nested tools' : total === 1 ? '1 tool' : `${total} tools`}).`;
}

/** The catalog note of a partial `exec` description (it replaces the deferred-tools note). */
function partialNote(described: number, total: number, search: boolean): string {
  const note =
    `Tool catalog: ${described} of ${total} nested tools are described below; the others are left out to save space. ` +
    'Every nested tool is still on `tools` and in `ALL_TOOLS`, whose entries carry each tool\'s TypeScript `declaration`. ' +
    'Find the others by filtering `ALL_TOOLS` by `name` and `description`, and read a tool\'s `declaration` before you call it.';
  return search ? `${note}\n${SEARCH_NOTE}` : note;
}

const SUMMARY_HEADING = 'Nested tools not described above, by namespace:';

/** The first sentence (at most 100 characters) of a namespace description, for a summary line. */
function gist(description: string | undefined): string {
  const text = safeToolText(description?.trim() ?? '').split('\n')[0];
  const sentence = /^.*?[.!?](?=\s|$)/.exec(text)?.[0] ?? text;
  return sentence.length <= 100 ? sentence : `${sentence.slice(0, 99)}…`;
}

/** Summary lines of the tools left out: one per namespace (by name), plain tools first. */
function summaryLines(missing: readonly NestedToolDefinition[]): string[] {
  const groups = new Map<string, { count: number; description?: string }>();
  for (const tool of missing) {
    const key = tool.toolName.namespace ?? '';
    const group = groups.get(key) ?? { count: 0 };
    group.count++;
    if (group.description === undefined && tool.namespaceDescription?.trim()) group.description = tool.namespaceDescription;
    groups.set(key, group);
  }
  return [...groups.keys()].sort(cmp).map((key) => {
    const { count, description } = groups.get(key) as { count: number; description?: string };
    const tools = count === 1 ? '1 tool' : `${count} tools`;
    if (key === '') return `- ${tools} without a namespace`;
    const about = gist(description);
    return about ? `- \`${key}\` (${tools}): ${about}` : `- \`${key}\` (${tools})`;
  });
}

/** The summary under a token budget: lines while they fit, then "- … and N more namespaces". */
function summaryBlock(missing: readonly NestedToolDefinition[], tokens: number, count: (text: string) => number): string {
  if (missing.length === 0) return '';
  const lines = summaryLines(missing);
  const kept: string[] = [SUMMARY_HEADING];
  let used = count(SUMMARY_HEADING) + 1;
  for (const [index, line] of lines.entries()) {
    const rest = lines.length - index - 1;
    const overflow = rest === 0 ? 0 : count(`- … and ${rest} more namespaces`) + 1;
    const cost = count(line) + 1;
    if (used + cost + overflow > tokens) {
      kept.push(`- … and ${lines.length - index} more namespaces`);
      break;
    }
    kept.push(line);
    used += cost;
  }
  return kept.join('\n');
}

/**
 * Which tools a partial description describes first: tools a cell of the session found
 * (`discovered`), in reference order; then tools named by a priority hint, in hint
 * order; then round-robin over namespaces (sorted by name, plain tools as one group, each group
 * in reference order), so every namespace gets a share. Deterministic for the same tools.
 */
function describeOrder(tools: readonly NestedToolDefinition[], priority: readonly string[] | undefined): NestedToolDefinition[] {
  const rank = createPriorityRanker(priority);
  const hinted: Array<{ tool: NestedToolDefinition; rank: number; index: number }> = [];
  const groups = new Map<string, NestedToolDefinition[]>();
  for (const [index, tool] of tools.entries()) {
    const hint = tool.discovered ? -1 : rank(tool.toolName);
    if (hint < Infinity) {
      hinted.push({ tool, rank: hint, index });
      continue;
    }
    const key = tool.toolName.namespace ?? '';
    const group = groups.get(key);
    if (group) group.push(tool);
    else groups.set(key, [tool]);
  }
  hinted.sort((a, b) => a.rank - b.rank || a.index - b.index);
  const order = hinted.map((entry) => entry.tool);
  const lists = [...groups.keys()].sort(cmp).map((key) => groups.get(key) as NestedToolDefinition[]);
  const longest = Math.max(0, ...lists.map((list) => list.length));
  for (let round = 0; round < longest; round++) {
    for (const list of lists) if (round < list.length) order.push(list[round]);
  }
  return order;
}

/**
 * The `exec` description for a step's surface: the template (in `code-mode`, followed by the
 * deferred-tools note when some nested tools are deferred, as Codex does); in `code-mode-only` also the
 * catalog line ("Tool catalog: complete (N tools).", or "N of M" followed by the
 * deferred-tools note when some are deferred), the shared MCP types (when an output schema is
 * MCP-shaped) and the nested-tool reference. Under the surface's token budget (default 2,000,
 * counted on the text as the request's JSON carries it) a reference that does not fit is cut:
 * tools are described in {@link describeOrder} while they fit, the rest are summarized by
 * namespace with counts, and the note says "N of M nested tools are described below; the others
 * are left out to save space". The same surface always gives the same text.
 */
export function execDescription(surface: CodeModeSurface): string {
  if (surface.mode !== 'code-mode-only') return surface.hasDeferredTools ? `${EXEC_TEMPLATE}\n\n${deferredNote(surface)}` : EXEC_TEMPLATE;
  const key = [surface.hasDeferredTools, surface.toolSearch === true, surface.budget?.tokens, surface.budget?.countTokens, (surface.budget?.priority ?? []).join('\u0000')];
  const cached = recentDescriptions.find(
    (entry) => entry.key.every((part, index) => part === key[index]) && entry.tools.length === surface.tools.length && entry.tools.every((tool, index) => tool === surface.tools[index]),
  );
  if (cached) return cached.text;
  const text = budgetedDescription(surface);
  recentDescriptions.unshift({ key, tools: surface.tools, text });
  if (recentDescriptions.length > 4) recentDescriptions.pop();
  return text;
}

/**
 * The last few descriptions by surface: the same definition objects (the planner reuses them
 * for unchanged tools) and the same budget give the same text, so a step re-planning the same
 * tools does not render them again.
 */
const recentDescriptions: Array<{ key: readonly unknown[]; tools: readonly NestedToolDefinition[]; text: string }> = [];

function budgetedDescription(surface: CodeModeSurface): string {
  const count = surface.budget?.countTokens ?? estimateTokens;
  const tokens = surface.budget?.tokens ?? DEFAULT_TOOL_BUDGET_TOKENS;
  const costOf = (text: string) => count(JSON.stringify(text));
  const mcp = surface.tools.some((tool) => isMcpOutputSchema(tool.outputSchema));
  const assemble = (note: string | undefined, described: readonly NestedToolDefinition[], summary: string) =>
    [EXEC_TEMPLATE, note, mcp ? MCP_TYPES : undefined, renderReference(described), summary].filter((part) => part).join('\n\n');

  const eligible = referenceOrder(surface.tools.filter((tool) => !tool.deferred));
  const all = referenceOrder(surface.tools);
  const line = catalogLine(eligible.length, all.length);
  const fullNote = surface.hasDeferredTools ? `${line}\n${deferredNote(surface)}` : line;
  if (!(tokens < Infinity)) return assemble(fullNote, eligible, '');
  // Everything, if it fits: add up the sections first and stop as soon as they pass the budget.
  let total = costOf(assemble(fullNote, [], ''));
  for (const tool of eligible) {
    if (total > tokens) break;
    total += costOf(toolSection(tool)) + 1;
  }
  if (total <= tokens) {
    const full = assemble(fullNote, eligible, '');
    if (costOf(full) <= tokens) return full;
  }

  // Partial: the fixed parts and a reserved summary first, then tools while they fit.
  const summaryTokens = Math.floor(tokens / 4);
  const search = surface.toolSearch === true;
  const fixed = costOf(assemble(partialNote(all.length, all.length, search), [], summaryBlock(all, summaryTokens, count)));
  const chosen = selectWithinBudget(describeOrder(eligible, surface.budget?.priority), tokens - fixed, (tool, opened) => {
    const namespace = tool.toolName.namespace ?? '';
    const section = opened.has(namespace) ? undefined : namespaceSection(tool);
    return { cost: costOf(toolSection(tool)) + 1 + (section ? costOf(section) + 1 : 0), opens: namespace };
  });
  // The parts' estimate is not the whole's: drop the last chosen tool until the whole fits.
  for (;;) {
    const picked = new Set(chosen);
    const described = all.filter((tool) => picked.has(tool));
    const missing = all.filter((tool) => !picked.has(tool));
    const text = assemble(partialNote(described.length, all.length, search), described, summaryBlock(missing, summaryTokens, count));
    if (costOf(text) <= tokens || chosen.length === 0) return text;
    chosen.pop();
  }
}

/**
 * The `wait` description, Codex's text: the first line, then one bullet per rule. The tool JSON
 * (this, `strict: false` and {@link WAIT_PARAMETERS}) is byte-identical to Codex's `wait` spec, so a
 * model trained on it reads the same tool.
 */
export const WAIT_DESCRIPTION = `Waits on a yielded \`exec\` cell and returns new output or completion.
- Use \`wait\` only after \`exec\` returns \`Script running with cell ID ...\`.
- \`cell_id\` identifies the running \`exec\` cell to resume.
- \`yield_time_ms\` controls how long to wait for more output before yielding again. Defaults to 10000 ms.
- \`max_tokens\` limits how much new output this wait call returns. Defaults to 10000 tokens.
- \`terminate: true\` stops the running cell; false or omitted waits for output.
- \`wait\` returns only the new output since the last yield, or the final completion or termination result for that cell.
- If the cell is still running, \`wait\` may yield again with the same \`cell_id\`.
- If the cell has already finished, \`wait\` returns the completed result and closes the cell.`;

/**
 * The `wait` parameters. Key order is the wire order: Codex serializes properties sorted by name and
 * each schema as `type`, `description`, …, `properties`, `required`, `additionalProperties`.
 */
export const WAIT_PARAMETERS: JsonSchema = {
  type: 'object',
  properties: {
    cell_id: { type: 'string', description: 'Identifier of the running exec cell.' },
    max_tokens: { type: 'number', description: 'Output token budget for this wait call. Defaults to 10000 tokens.' },
    terminate: { type: 'boolean', description: 'True stops the running exec cell; false or omitted waits for output.' },
    yield_time_ms: { type: 'number', description: 'Wait before yielding more output. Defaults to 10000 ms.' },
  },
  required: ['cell_id'],
  additionalProperties: false,
};
