import {
  CODE_MODE_RESERVED_NAMES,
  codeModeName,
  displayName,
  executorExposure,
  toolName,
  type CodeModeSurface,
  type NestedToolDefinition,
  type PlanWarningEvent,
  type ToolExecutor,
} from '@switchyard/protocol';
import { PlanMemo } from './plan-cache';
import { NESTED_TOOL_SEARCH_DESCRIPTION, NESTED_TOOL_SEARCH_INPUT, NESTED_TOOL_SEARCH_OUTPUT } from './nested-search';

/** What {@link buildCodeModeSurface} found: the surface plus each callable executor's code-mode name. */
export interface CodeModeSurfaceResult {
  readonly surface: CodeModeSurface;
  /** Callable executors and their JS identifier under `tools.`. */
  readonly callable: ReadonlyMap<ToolExecutor, string>;
  /** Callable executors and their definitions (what a cell's `tools.tool_search` searches). */
  readonly definitions: ReadonlyMap<ToolExecutor, NestedToolDefinition>;
  readonly warnings: readonly PlanWarningEvent[];
}

/**
 * Definitions by executor, reused while the executor's spec, exposure, code-mode name and
 * namespace description are the same: a step that plans the same tools hands out the same
 * definition objects, so renderings keyed by definition (Code Mode's declarations) are reused.
 */
const definitionMemo = new WeakMap<ToolExecutor, NestedToolDefinition>();

/** What a nested definition says beside its executor's spec. */
interface DefinitionTraits {
  readonly name: string;
  readonly deferred: boolean;
  readonly discovered: boolean;
  readonly namespaceDescription: string | undefined;
}

function definitionOf(executor: ToolExecutor, { name, deferred, discovered, namespaceDescription }: DefinitionTraits): NestedToolDefinition {
  const spec = executor.spec;
  const memo = definitionMemo.get(executor);
  if (
    memo &&
    memo.codeModeName === name &&
    memo.deferred === deferred &&
    (memo.discovered === true) === discovered &&
    memo.namespaceDescription === namespaceDescription &&
    memo.toolName === executor.name &&
    memo.idempotent === (executor.idempotent === true ? true : undefined) &&
    memo.description === spec.description &&
    memo.inputSchema === (spec.type === 'function' ? spec.parameters : undefined) &&
    memo.outputSchema === (spec.type === 'function' ? spec.outputSchema : undefined) &&
    memo.kind === (spec.type === 'function' ? 'function' : 'freeform')
  ) {
    return memo;
  }
  const definition: NestedToolDefinition = Object.freeze({
    toolName: executor.name,
    codeModeName: name,
    description: spec.description,
    kind: spec.type === 'function' ? 'function' : 'freeform',
    ...(spec.type === 'function' ? { inputSchema: spec.parameters } : {}),
    ...(spec.type === 'function' && spec.outputSchema ? { outputSchema: spec.outputSchema } : {}),
    deferred,
    ...(namespaceDescription !== undefined ? { namespaceDescription } : {}),
    ...(discovered ? { discovered } : {}),
    ...(executor.idempotent === true ? { idempotent: true } : {}),
  });
  definitionMemo.set(executor, definition);
  return definition;
}

/** Code-mode names by ToolName object (normalizing is a per-character scan). */
const nameMemo = new WeakMap<object, string>();

function memoCodeModeName(tool: ToolExecutor['name']): string {
  let name = nameMemo.get(tool);
  if (name === undefined) {
    name = codeModeName(tool);
    nameMemo.set(tool, name);
  }
  return name;
}

/** Sorted by code-mode name; the same definitions in the same host order as the cache's last sort reuse it. */
function sortByCodeModeName(definitions: NestedToolDefinition[], memo: PlanMemo): NestedToolDefinition[] {
  const last = memo.lastSort;
  if (last && last.input.length === definitions.length && last.input.every((definition, index) => definition === definitions[index])) {
    return [...last.sorted];
  }
  const sorted = [...definitions].sort((a, b) => (a.codeModeName < b.codeModeName ? -1 : a.codeModeName > b.codeModeName ? 1 : 0));
  memo.lastSort = { input: definitions, sorted };
  return [...sorted];
}

/** The nested definition of `tools.tool_search` (one object: renderings keyed by definition are reused). */
export const NESTED_TOOL_SEARCH_DEFINITION: NestedToolDefinition = Object.freeze({
  toolName: toolName('tool_search'),
  codeModeName: 'tool_search',
  description: NESTED_TOOL_SEARCH_DESCRIPTION,
  kind: 'function',
  inputSchema: NESTED_TOOL_SEARCH_INPUT,
  outputSchema: NESTED_TOOL_SEARCH_OUTPUT,
  deferred: false,
});

/** What a code-mode surface adds beside the host's tools. */
export interface SurfaceOptions {
  /** Display names of tools the caller's cells found: described (deferred or not), and first under a budget. */
  readonly discovered?: ReadonlySet<string>;
  /** A cell can search: `tools.tool_search` joins the surface when some callable tool is deferred (its name is then reserved). */
  readonly search?: boolean;
}

/**
 * The nested (JS-callable) surface of a code-mode plan: `direct` and `deferred`
 * executors with a function or freeform spec, except `direct-model-only`, `hidden`, tools in
 * excluded namespaces and `exec` / `wait`. Sorted by code-mode name; when two tools normalize to
 * the same identifier, the first in host order keeps it and the other is not callable (warning).
 * With `options.search` and a callable deferred tool, `tools.tool_search` is one of them.
 */
export function buildCodeModeSurface(
  mode: CodeModeSurface['mode'],
  executors: readonly ToolExecutor[],
  excludedNamespaces: readonly string[] = [],
  memo: PlanMemo = new PlanMemo(),
  options: SurfaceOptions = {},
): CodeModeSurfaceResult {
  const excluded = new Set(excludedNamespaces);
  const namespaceDescriptions = new Map<string, string>();
  for (const executor of executors) {
    const namespace = executor.name.namespace;
    const description = executor.namespaceDescription;
    if (namespace && description && description.trim() !== '' && !namespaceDescriptions.has(namespace)) {
      namespaceDescriptions.set(namespace, description);
    }
  }

  const callable = new Map<ToolExecutor, string>();
  const byExecutor = new Map<ToolExecutor, NestedToolDefinition>();
  const owners = new Map<string, ToolExecutor>();
  const warnings: PlanWarningEvent[] = [];
  const definitions: NestedToolDefinition[] = [];
  const searchable = options.search === true && executors.some((executor) => isNestedDeferred(executor, excluded));
  for (const executor of executors) {
    const exposure = executorExposure(executor);
    if (exposure !== 'direct' && exposure !== 'deferred') continue;
    if (executor.spec.type !== 'function' && executor.spec.type !== 'custom') continue;
    if (executor.name.namespace && excluded.has(executor.name.namespace)) continue;
    const name = memoCodeModeName(executor.name);
    if (CODE_MODE_RESERVED_NAMES.includes(name)) continue;
    if (searchable && name === NESTED_TOOL_SEARCH_DEFINITION.codeModeName) {
      const label = displayName(executor.name);
      warnings.push({ type: 'plan-warning', toolName: label, message: `tool "${label}" is not callable from code mode: its code-mode name "${name}" is reserved by the cells' tool_search` });
      continue;
    }
    const owner = owners.get(name);
    if (owner) {
      warnings.push({
        type: 'plan-warning',
        toolName: displayName(executor.name),
        message: `tool "${displayName(executor.name)}" is not callable from code mode: its code-mode name "${name}" is already taken by "${displayName(owner.name)}"`,
      });
      continue;
    }
    owners.set(name, executor);
    callable.set(executor, name);
    const namespaceDescription = executor.name.namespace ? namespaceDescriptions.get(executor.name.namespace) : undefined;
    const discovered = options.discovered?.has(displayName(executor.name)) === true;
    const definition = definitionOf(executor, { name, deferred: exposure === 'deferred' && !discovered, discovered, namespaceDescription });
    definitions.push(definition);
    byExecutor.set(executor, definition);
  }
  if (searchable) definitions.push(NESTED_TOOL_SEARCH_DEFINITION);
  const sorted = sortByCodeModeName(definitions, memo);
  const surface: CodeModeSurface = {
    mode,
    tools: sorted,
    hasDeferredTools: sorted.some((definition) => definition.deferred),
    ...(searchable ? { toolSearch: true } : {}),
  };
  return { surface, callable, definitions: byExecutor, warnings };
}

/** A deferred function or custom tool a cell may call (not in an excluded namespace). */
function isNestedDeferred(executor: ToolExecutor, excluded: ReadonlySet<string>): boolean {
  if (executorExposure(executor) !== 'deferred') return false;
  if (executor.spec.type !== 'function' && executor.spec.type !== 'custom') return false;
  return !(executor.name.namespace && excluded.has(executor.name.namespace));
}
