import { SwitchyardError, displayName, executorProtocolProblem, toolNameKey, type ToolExecutor, type ToolName } from '@switchyard/protocol';

/**
 * The host's executable table: every executor a step can run, looked up by exact {@link ToolName}
 * (a namespaced tool never answers for a plain one of the same name).
 */
export class ToolRegistry {
  private readonly byKey: ReadonlyMap<string, ToolExecutor>;
  private readonly executors: readonly ToolExecutor[];

  private constructor(executors: readonly ToolExecutor[]) {
    const byKey = new Map<string, ToolExecutor>();
    for (const executor of executors) {
      if (!executor || typeof executor !== 'object' || !executor.name || typeof executor.name.name !== 'string') {
        throw new SwitchyardError('CONFIG', 'tool registry: every executor needs a `name` ToolName');
      }
      if (typeof executor.handle !== 'function') {
        throw new SwitchyardError('CONFIG', `tool registry: executor ${displayName(executor.name)} has no handle() function`);
      }
      // A plugin built for another contract line (a second copy of the protocol beside the host's) is refused, never half-run.
      const incompatible = executorProtocolProblem(executor);
      if (incompatible) throw new SwitchyardError('CONFIG', `tool registry: ${incompatible}`);
      const key = toolNameKey(executor.name);
      if (byKey.has(key)) {
        throw new SwitchyardError('CONFIG', `tool registry: duplicate tool name ${describe(executor.name)}`);
      }
      byKey.set(key, executor);
    }
    this.byKey = byKey;
    this.executors = Object.freeze([...executors]);
  }

  /**
   * Builds a registry. Throws a `CONFIG` error for a duplicate name, a malformed executor, or one
   * built against an incompatible `@switchyard/protocol` (naming both versions).
   */
  static from(executors: readonly ToolExecutor[]): ToolRegistry {
    return new ToolRegistry(executors);
  }

  /** The executor with exactly this name, or `undefined`. */
  get(name: ToolName): ToolExecutor | undefined {
    return this.byKey.get(toolNameKey(name));
  }

  /** True when an executor has exactly this name. */
  has(name: ToolName): boolean {
    return this.byKey.has(toolNameKey(name));
  }

  /** Every executor, in registration order. */
  list(): readonly ToolExecutor[] {
    return this.executors;
  }
}

function describe(name: ToolName): string {
  return name.namespace ? `${displayName(name)} (namespace ${name.namespace}, name ${name.name})` : name.name;
}
