/**
 * The token budget of a step's tool table: how much of the model's prompt the tools may take.
 * The planner applies it to the visible tools (direct and code-mode, when the provider can search
 * deferred tools) and hands it to the Code Mode contributor for the `exec` description.
 */
export interface ToolBudget {
  /**
   * Tokens the tool table may take, as counted by {@link ToolBudget.countTokens} on the JSON the
   * request carries. Default 2,000 (`DEFAULT_TOOL_BUDGET_TOKENS` of `@switchyard/kit`); `Infinity`
   * turns budgeting off.
   */
  readonly tokens?: number;
  /**
   * Priority hints: tool names (display `namespace + name`, the Code Mode name, or the bare name)
   * and namespace names. Matching tools are kept visible / described first, in this order.
   */
  readonly priority?: readonly string[];
  /**
   * Counts the tokens of a text. Default `estimateTokens` of `@switchyard/kit`, an estimate
   * calibrated against the o200k tokenizer; a host with a real tokenizer passes it here. Should be pure; a counter
   * that throws or answers something other than a non-negative number falls back to the estimate.
   */
  readonly countTokens?: (text: string) => number;
}
