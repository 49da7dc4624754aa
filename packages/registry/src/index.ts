// Registry and router
export { ToolRegistry } from './tool-registry';
export { createToolRouter } from './tool-router';
export type { ToolRouter, ToolRouterOptions } from './tool-router';

// Runtime: dispatching a step's calls
export { ToolCallRuntime, DEFAULT_MAX_CONCURRENT_TOOL_CALLS } from './tool-call-runtime';
export type { DispatchResult, HandleOptions, ToolCallRuntimeOptions } from './tool-call-runtime';

// Executors served outside a session (MCP servers, AI SDK tool sets)
export { createExecutorHost } from './executor-host';
export type { ExecutorHost, ExecutorHostOptions } from './executor-host';

export { VERSION } from './version';
