// Registry and router
export { ToolRegistry } from './tool-registry';
export { createToolRouter } from './tool-router';
export type { ToolRouter, ToolRouterOptions } from './tool-router';
export { buildToolCall, malformedCallMessage } from './build-tool-call';

// Runtime
export { ToolCallRuntime } from './tool-call-runtime';
export type { DispatchResult, HandleOptions, ToolCallRuntimeOptions } from './tool-call-runtime';
export { ReadWriteGate } from './read-write-gate';
export type { GateMode, GateRelease } from './read-write-gate';

// Input validation
export { validateArguments, parseFunctionArguments, schemaFailures } from './input-validation';

// Hooks
export { HookFeedbackOutput } from './hook-feedback-output';
export { blockedMessage } from './hook-payloads';
export { POST_HOOK_STOPPED_MESSAGE } from './dispatch';

export { VERSION } from './version';
