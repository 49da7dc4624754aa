import type { ContextWindowStatus, JsonSchema, StepContext, ToolExecutor } from '@switchyard/protocol';
import { FunctionToolOutput, defineFunctionTool } from '@switchyard/kit';

/**
 * Supplies the context-window status for a call. Return `undefined` when nothing is known (the
 * model then reads "unknown"). A throw becomes a model-visible failure naming the tool.
 */
export interface ContextStatusProvider {
  status(context: { step: StepContext; signal: AbortSignal }): ContextWindowStatus | undefined | Promise<ContextWindowStatus | undefined>;
}

/** Options of {@link contextRemainingTool}. */
export interface ContextRemainingToolOptions {
  /** Where the status comes from. Default: `invocation.step.contextWindow`, filled by the session. */
  statusProvider?: ContextStatusProvider;
  /** Share of the configured window the model may really use, in percent. Default 95 (the reference). */
  effectiveWindowPercent?: number;
}

/** What a Code Mode cell receives: tokens left, or `null` when no limit is known. */
export interface ContextRemainingResult {
  tokens_left: number | null;
}

/** The description the model reads. */
export const CONTEXT_REMAINING_DESCRIPTION = 'Get the remaining tokens in the current context window.';

const DEFAULT_EFFECTIVE_PERCENT = 95;

const NO_PARAMETERS: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };

const RESULT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { tokens_left: { type: ['integer', 'null'] } },
  required: ['tokens_left'],
  additionalProperties: false,
};

/** The usable part of a configured window: `floor(window × percent / 100)`; `null` stays `null`. */
export function effectiveContextWindow(windowTokens: number | null, percent = DEFAULT_EFFECTIVE_PERCENT): number | null {
  if (windowTokens === null || !Number.isFinite(windowTokens)) return null;
  return Math.floor((windowTokens * percent) / 100);
}

/**
 * Tokens until compaction: the auto-compact limit minus used tokens, capped by
 * what is left of the effective window, floored at 0; `null` when neither limit is known.
 */
export function tokensLeft(status: ContextWindowStatus | undefined, percent = DEFAULT_EFFECTIVE_PERCENT): number | null {
  if (!status) return null;
  const used = Number.isFinite(status.usedTokens) ? Math.max(0, status.usedTokens) : 0;
  const window = effectiveContextWindow(status.windowTokens, percent);
  const compact = status.autoCompactTokens ?? null;
  const limits = [window, compact].filter((limit): limit is number => limit !== null && Number.isFinite(limit));
  if (limits.length === 0) return null;
  return Math.max(0, Math.min(...limits.map((limit) => limit - used)));
}

/** The sentence the model reads, bare, as the reference's tool answers it. */
export function formatTokensLeft(tokens: number | null): string {
  return `You have ${tokens === null ? 'unknown' : tokens} tokens left in this context window.`;
}

/**
 * The `get_context_remaining` tool: no parameters; the model reads the sentence
 * `You have N tokens left in this context window.`, Code Mode receives `{ tokens_left }`.
 */
export function contextRemainingTool(options: ContextRemainingToolOptions = {}): ToolExecutor {
  const percent = options.effectiveWindowPercent ?? DEFAULT_EFFECTIVE_PERCENT;
  if (!(percent > 0 && percent <= 100)) throw new RangeError(`effectiveWindowPercent must be in (0, 100], got ${percent}`);
  return defineFunctionTool({
    name: 'get_context_remaining',
    description: CONTEXT_REMAINING_DESCRIPTION,
    strict: false,
    parameters: NO_PARAMETERS,
    outputSchema: RESULT_SCHEMA,
    supportsParallelToolCalls: true,
    async handle({ invocation, signal }) {
      const status = options.statusProvider
        ? await options.statusProvider.status({ step: invocation.step, signal })
        : invocation.step.contextWindow;
      const tokens = tokensLeft(status, percent);
      return new FunctionToolOutput(formatTokensLeft(tokens), true, { tokens_left: tokens });
    },
  });
}
