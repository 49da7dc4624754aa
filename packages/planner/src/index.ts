// Planning: the two tables of one sampling step.
export { planTools } from './plan-tools';
export type { PlanContext, PlanRow, ToolPlan, ToolSources } from './plan-tools';

// The tool budget, checked and defaulted as planTools reads it.
export { resolveToolBudget } from './tool-budget';
export type { ResolvedToolBudget } from './tool-budget';

export { VERSION } from './version';
