import type { StepContext } from './context';
import type { ToolExecutor } from './executor';
import type { JsonSchema } from './json';
import type { ToolBudget } from './tool-budget';
import { joinNamespace, type ToolName } from './tool-name';

/**
 * One tool callable from a Code Mode cell, as computed by the planner.
 */
export interface NestedToolDefinition {
  /** The registered tool this definition calls. */
  readonly toolName: ToolName;
  /** The JS identifier under `tools.` (`clock__curr_time`, `mcp__docs__search`). */
  readonly codeModeName: string;
  /** The tool's description (a function member's own description). */
  readonly description: string;
  /** `function` tools take an object (or nothing), `freeform` tools a string. */
  readonly kind: 'function' | 'freeform';
  /** Arguments schema (function tools). */
  readonly inputSchema?: JsonSchema;
  /** Result schema, for the TypeScript declaration in the `exec` description. */
  readonly outputSchema?: JsonSchema;
  /** Deferred tools are callable but not described in the `exec` description. */
  readonly deferred: boolean;
  /** The namespace description, for headings in the `exec` description. */
  readonly namespaceDescription?: string;
  /**
   * A cell of this session found the tool with `tools.tool_search` and the host shows found tools
   * in later plans: it is described even when deferred, and first when a budget cuts the description.
   */
  readonly discovered?: boolean;
  /** The executor is safe to run twice (`ToolExecutor.idempotent`). */
  readonly idempotent?: boolean;
}

/** The nested surface of one step, handed to a {@link CodeModeContributor}. */
export interface CodeModeSurface {
  /** `code-mode` keeps direct tools visible; `code-mode-only` hides them behind `exec`. */
  readonly mode: 'code-mode' | 'code-mode-only';
  /** Every callable tool, sorted by code-mode name. */
  readonly tools: readonly NestedToolDefinition[];
  /** True when some callable tools are deferred (the description then tells the model to search `ALL_TOOLS`). */
  readonly hasDeferredTools: boolean;
  /**
   * True when a cell can search the nested tools with `tools.tool_search({ query, limit })` (one of
   * `tools`, planned when some callable tool is deferred): the description then says so.
   */
  readonly toolSearch?: boolean;
  /**
   * The step's tool budget, for the `exec` description (declarations inlined up to `tokens`, the
   * rest summarized). Set by the planner; absent means the contributor's defaults.
   */
  readonly budget?: ToolBudget;
}

/**
 * What the planner asks for in `code-mode` / `code-mode-only`: the `exec` and `wait` executors
 * for a step's nested surface. Implemented by `@switchyard/code-mode` (`createCodeMode`), so the
 * planner never depends on it. Called once per planned step; must not throw (return `[]` to
 * contribute nothing). The planner prepends the result, in order, to the visible list.
 */
export interface CodeModeContributor {
  /**
   * Returns the control executors (`exec`, `wait`) for one step's nested surface. Called by the planner once per
   * planned step; must not throw (return `[]` to contribute nothing).
   */
  executors(surface: CodeModeSurface, step: StepContext): readonly ToolExecutor[];
}

/** Names a code-mode plan reserves for its control tools. */
export const CODE_MODE_RESERVED_NAMES: readonly string[] = ['exec', 'wait'];

/**
 * The code-mode name of a tool: `namespace + name` if the namespace ends with `_` or the name
 * starts with `_`, else `namespace + "__" + name` (see `joinNamespace`); then normalized to a JS
 * identifier by {@link normalizeIdentifier}. Equals the display name whenever that is already an
 * identifier (a hyphen in `read-file` becomes `_` here, never in the display name).
 */
export function codeModeName(tool: ToolName): string {
  return normalizeIdentifier(tool.namespace ? joinNamespace(tool.namespace, tool.name) : tool.name);
}

/**
 * Normalizes any string to a JS identifier, character by character:
 * the first character is kept if it is `_`, `$` or an ASCII letter, later ones if `_`, `$` or ASCII
 * alphanumeric; every other character (a leading digit, `-`, `.`, a space, any non-ASCII code point)
 * becomes one `_`. `""` becomes `_`.
 */
export function normalizeIdentifier(raw: string): string {
  let out = '';
  for (const char of raw) {
    const keep = out === '' ? /^[A-Za-z_$]$/.test(char) : /^[A-Za-z0-9_$]$/.test(char);
    out += keep ? char : '_';
  }
  return out === '' ? '_' : out;
}
