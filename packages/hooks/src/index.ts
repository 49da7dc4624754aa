// The engine
export { createHookEngine } from './hook-engine';
export type { HookEngine, HookEngineOptions } from './hook-engine';

// Configuration
export type {
  CommandHookConfig,
  FunctionHookConfig,
  FunctionHookRegistration,
  HookEventName,
  HookHandlerConfig,
  HookMatcherGroup,
  HooksConfig,
} from './hooks-config';
export { compileMatcher } from './matcher';
export type { Matcher } from './matcher';

// What hooks read and write
export type { FunctionHook, HookInput, HookJsonOutput, PostToolUseHookInput, PreToolUseHookInput } from './hook-payload';

// Lower-level pieces
export { runHookCommand, DEFAULT_MAX_OUTPUT_BYTES } from './command-runner';
export type { HookCommandResult, RunHookCommandOptions } from './command-runner';

export { VERSION } from './version';
