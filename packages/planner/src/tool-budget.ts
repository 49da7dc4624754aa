import { SwitchyardError, type ToolBudget, type ToolName } from '@switchyard/protocol';
import { DEFAULT_TOOL_BUDGET_TOKENS, createPriorityRanker, estimateTokens } from '@switchyard/kit/internal';

/** A tool budget with its defaults filled in. */
export interface ResolvedToolBudget {
  /** Tokens the tool table may take; `Infinity` when budgeting is off. */
  readonly tokens: number;
  /** The counter: the host's `countTokens` or `estimateTokens`. */
  readonly countTokens: (text: string) => number;
  /** Priority rank of a tool (lower first, `Infinity` without a hint). */
  readonly rank: (tool: ToolName) => number;
  /** The budget handed to the Code Mode contributor (defaults filled in). */
  readonly given: ToolBudget;
}

/**
 * Checks a host's tool budget and fills in the defaults (2,000 tokens, `estimateTokens`, no
 * hints). Throws a `CONFIG` error naming `option` for a budget that is not an object, a `tokens`
 * that is not a positive number (`Infinity` allowed), hints that are not strings, or a
 * `countTokens` that is not a function.
 */
export function resolveToolBudget(budget: unknown, option = 'budget'): ResolvedToolBudget {
  if (budget !== undefined && (typeof budget !== 'object' || budget === null || Array.isArray(budget))) {
    throw new SwitchyardError('CONFIG', `${option} must be an object like { tokens: 2000 }`);
  }
  const given = (budget ?? {}) as ToolBudget;
  const tokens = given.tokens ?? DEFAULT_TOOL_BUDGET_TOKENS;
  if (typeof tokens !== 'number' || Number.isNaN(tokens) || tokens <= 0) {
    throw new SwitchyardError('CONFIG', `${option}.tokens must be a positive number of tokens (Infinity turns the budget off), got ${String(tokens)}`);
  }
  if (given.priority !== undefined && !(Array.isArray(given.priority) && given.priority.every((hint) => typeof hint === 'string'))) {
    throw new SwitchyardError('CONFIG', `${option}.priority must be a list of tool or namespace names`);
  }
  if (given.countTokens !== undefined && typeof given.countTokens !== 'function') {
    throw new SwitchyardError('CONFIG', `${option}.countTokens must be a function (text) => number`);
  }
  const host = given.countTokens;
  // a host counter that throws or answers something other than a count falls back to the estimate
  const countTokens = host
    ? (text: string) => {
        let counted: unknown;
        try {
          counted = host(text);
        } catch {
          return estimateTokens(text);
        }
        return typeof counted === 'number' && Number.isFinite(counted) && counted >= 0 ? counted : estimateTokens(text);
      }
    : estimateTokens;
  return {
    tokens,
    countTokens,
    rank: createPriorityRanker(given.priority),
    given: { tokens, ...(given.priority ? { priority: [...given.priority] } : {}), ...(host ? { countTokens } : {}) },
  };
}
