/**
 * @switchyard/registry/testing — a conformance kit for executor authors. `invokeTool` runs one call
 * through the registry's real dispatch (the pieces a session builds for each step); `testExecutor`
 * registers a vitest suite checking every promise of the `ToolExecutor` contract. Test code only:
 * this entry imports `vitest` (an optional peer), the package's main entry never does.
 */
export { invokeTool, createToolHarness } from './invoke-tool';
export type { InvokeToolOptions, InvokeToolResult, RecordedHookInputs, ToolCallInput, ToolHarness } from './invoke-tool';
export { testExecutor, EXECUTOR_CHECKS } from './test-executor';
export type { ExecutorCheck, ExecutorCheckSkip, ExecutorTestContext, TestExecutorOptions } from './test-executor';
