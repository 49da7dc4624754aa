import {
  CODE_MODE_RESERVED_NAMES,
  codeModeName,
  displayName,
  executorExposure,
  type CodeModeSurface,
  type NestedToolDefinition,
  type PlanWarningEvent,
  type ToolExecutor,
} from '@switchyard/protocol';

/** What {@link buildCodeModeSurface} found: the surface plus each callable executor's code-mode name. */
export interface CodeModeSurfaceResult {
  readonly surface: CodeModeSurface;
  /** Callable executors and their JS identifier under `tools.`. */
  readonly callable: ReadonlyMap<ToolExecutor, string>;
  readonly warnings: readonly PlanWarningEvent[];
}

/**
 * The nested (JS-callable) surface of a code-mode plan (reference §1.7): `direct` and `deferred`
 * executors with a function or freeform spec, except `direct-model-only`, `hidden`, tools in
 * excluded namespaces and `exec` / `wait`. Sorted by code-mode name; when two tools normalize to
 * the same identifier, the first in host order keeps it and the other is not callable (warning).
 */
export function buildCodeModeSurface(
  mode: CodeModeSurface['mode'],
  executors: readonly ToolExecutor[],
  excludedNamespaces: readonly string[] = [],
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
  const owners = new Map<string, ToolExecutor>();
  const warnings: PlanWarningEvent[] = [];
  const definitions: NestedToolDefinition[] = [];
  for (const executor of executors) {
    const exposure = executorExposure(executor);
    if (exposure !== 'direct' && exposure !== 'deferred') continue;
    if (executor.spec.type !== 'function' && executor.spec.type !== 'custom') continue;
    if (executor.name.namespace && excluded.has(executor.name.namespace)) continue;
    const name = codeModeName(executor.name);
    if (CODE_MODE_RESERVED_NAMES.includes(name)) continue;
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
    const spec = executor.spec;
    const namespaceDescription = executor.name.namespace ? namespaceDescriptions.get(executor.name.namespace) : undefined;
    definitions.push({
      toolName: executor.name,
      codeModeName: name,
      description: spec.description,
      kind: spec.type === 'function' ? 'function' : 'freeform',
      ...(spec.type === 'function' ? { inputSchema: spec.parameters } : {}),
      ...(spec.type === 'function' && spec.outputSchema ? { outputSchema: spec.outputSchema } : {}),
      deferred: exposure === 'deferred',
      ...(namespaceDescription !== undefined ? { namespaceDescription } : {}),
    });
  }
  definitions.sort((a, b) => (a.codeModeName < b.codeModeName ? -1 : a.codeModeName > b.codeModeName ? 1 : 0));
  const surface: CodeModeSurface = {
    mode,
    tools: definitions,
    hasDeferredTools: definitions.some((definition) => definition.deferred),
  };
  return { surface, callable, warnings };
}
