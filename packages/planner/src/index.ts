// Planning: the two tables of one sampling step.
export { planTools } from './plan-tools';
export type { PlanContext, PlanOptions, PlanRow, ToolPlan, ToolSources } from './plan-tools';

// What one caller's plans reuse from its earlier plans (a session owns one).
export { createPlanCache } from './plan-cache';
export type { PlanCache } from './plan-cache';

// How tool_search ranks: a host's own search function and limit (ToolSources.toolSearch).
export type { ToolSearchCandidate, ToolSearchFunction, ToolSearchRequest, ToolSearchSettings } from './search-ranking';

// The tool budget, checked and defaulted as planTools reads it.
export { resolveToolBudget } from './tool-budget';
export type { ResolvedToolBudget } from './tool-budget';

export { VERSION } from './version';
