import type { NestedToolDefinition, ToolExecutor } from '@switchyard/protocol';
import { SwitchyardError, errorMessage } from '@switchyard/protocol';
import { createToolSearchExecutor, type ToolSearchOptions } from './tool-search';

/**
 * What the plans of one caller reuse from its earlier plans: the recent `tool_search` executors
 * (by their deferred tools and description options) and the last sort of the Code Mode surface.
 * Opaque; make one with `createPlanCache()` per session (the session owns one) and pass it to each
 * of its `planTools` calls. Two caches never share an entry.
 */
export interface PlanCache {
  /** The `tool_search` executors it holds (at most 4, the most recently planned). */
  readonly size: number;
}

const TOOL_SEARCH_CACHE_SIZE = 4;

interface ToolSearchEntry {
  readonly deferred: readonly ToolExecutor[];
  readonly key: string;
  readonly options: ToolSearchOptions;
  readonly executor: ToolExecutor;
}

/** The same nested surface: the same executors with the same definition objects, in the same order. */
function sameNested(a: ToolSearchOptions['nested'], b: ToolSearchOptions['nested']): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.tools.size !== b.tools.size) return false;
  const others = [...b.tools];
  let index = 0;
  for (const [executor, definition] of a.tools) {
    const [otherExecutor, otherDefinition] = others[index++];
    if (executor !== otherExecutor || definition !== otherDefinition) return false;
  }
  return true;
}

/** The one implementation of {@link PlanCache}. */
export class PlanMemo implements PlanCache {
  private readonly toolSearches: ToolSearchEntry[] = [];
  /** The last sort: the same definitions in the same host order sort the same (a step re-planning unchanged tools). */
  lastSort: { input: readonly NestedToolDefinition[]; sorted: readonly NestedToolDefinition[] } | undefined;

  get size(): number {
    return this.toolSearches.length;
  }

  /** The `tool_search` executor over `deferred`: a recent one over the same executor objects and options, else a new one. */
  toolSearchExecutor(deferred: readonly ToolExecutor[], options: ToolSearchOptions): ToolExecutor {
    const key = JSON.stringify([options.sourcesBudgetTokens ?? null, options.catalog ?? null, options.defaultLimit ?? null, options.maxLimit ?? null]);
    for (const entry of this.toolSearches) {
      if (
        entry.key === key &&
        entry.options.search === options.search &&
        sameNested(entry.options.nested, options.nested) &&
        entry.deferred.length === deferred.length &&
        entry.deferred.every((executor, index) => executor === deferred[index]) &&
        entry.executor.spec.type === 'tool_search'
      ) {
        return entry.executor;
      }
    }
    const executor = createToolSearchExecutor(deferred, options);
    // a host's own countTokens may count differently each plan: only the default counter is cached
    if (options.countTokens === undefined) {
      this.toolSearches.unshift({ deferred, key, options, executor });
      if (this.toolSearches.length > TOOL_SEARCH_CACHE_SIZE) this.toolSearches.pop();
    }
    return executor;
  }
}

/** A new, empty {@link PlanCache}: one per session (or per caller whose steps re-plan the same tools). */
export function createPlanCache(): PlanCache {
  return new PlanMemo();
}

/** The cache of `planTools`' options, or a fresh one that lives for one plan; anything else is a `CONFIG` error naming the option. */
export function planMemoOf(options: unknown): PlanMemo {
  try {
    const cache = (options as { cache?: unknown } | null | undefined)?.cache;
    if (cache === undefined) return new PlanMemo();
    if (cache instanceof PlanMemo) return cache;
  } catch (error) {
    throw new SwitchyardError('CONFIG', `options.cache: unreadable (${errorMessage(error)})`, { cause: error });
  }
  throw new SwitchyardError('CONFIG', 'options.cache: expected a cache made by createPlanCache()');
}
