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
  HooksConfigFile,
  HttpHookConfig,
  McpToolHookConfig,
} from './hooks-config';

// What hooks read and write
export type {
  FunctionHook,
  HookInput,
  HookJsonOutput,
  InterruptHookInput,
  LifecycleHookInput,
  PermissionRequestHookInput,
  PostToolUseFailureHookInput,
  PostToolUseHookInput,
  PreToolUseHookInput,
  SessionEndHookInput,
  SessionStartHookInput,
  StopHookInput,
  UserPromptSubmitHookInput,
} from './hook-payload';

export { VERSION } from './version';
