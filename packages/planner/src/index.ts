// Planning: the two tables of one sampling step.
export { planTools } from './plan-tools';
export type { PlanContext, PlanRow, ToolPlan, ToolSources } from './plan-tools';

// Namespaces.
export { mergeNamespaces, defaultNamespaceDescription } from './namespaces';

// Code Mode surface and the usage sample in visible descriptions.
export { buildCodeModeSurface } from './code-mode-surface';
export type { CodeModeSurfaceResult } from './code-mode-surface';
export { codeModeUsageSample, renderJsonSchemaToTypeScript } from './typescript-declaration';
export type { CodeModeUsageSampleOptions } from './typescript-declaration';

// tool_search: BM25 over deferred tools.
export {
  TOOL_SEARCH_DEFAULT_LIMIT,
  TOOL_SEARCH_NAME,
  createToolSearchExecutor,
  createToolSearchIndex,
  sharedToolSearchIndex,
  toolSearchText,
} from './tool-search';
export type { ToolSearchIndex, ToolSearchOptions } from './tool-search';

// The tool budget.
export { resolveToolBudget } from './tool-budget';
export type { ResolvedToolBudget } from './tool-budget';

export { VERSION } from './version';
