import { APPROVAL_POLICIES, SANDBOX_MODES, SwitchyardError, TOOL_DISCOVERY_MODES, TOOL_MODES, executorProtocolProblem } from '@switchyard/protocol';
import { BACKOFF_OPTION_RULES, checkOptions, optionRules as rule, type OptionRule, type OptionsShape } from '@switchyard/kit/internal';
import type { SessionOptions, SessionRetryOptions } from './session-types';
import type { SessionStoreOptions } from './session-persistence';

/** A tool executor as far as the session can tell before planning: an object with a `name`, a `spec` and `handle`. */
const executorRule: OptionRule = (value) => {
  const executor = value as { name?: unknown; spec?: unknown; handle?: unknown } | null;
  return typeof executor === 'object' && executor !== null && typeof executor.name === 'object' && typeof executor.spec === 'object' && typeof executor.handle === 'function'
    ? undefined
    : 'must be a tool executor (e.g. `clockTool()` or `defineFunctionTool({...})`)';
};

/** `codeMode` is either a `createCodeMode(...)` value (it has `executors`) or settings for the lazy one. */
const codeModeRule: OptionRule = (value, path) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `must be an object; got ${value === null ? 'null' : typeof value}`;
  if ('executors' in value) return undefined;
  return rule.shape<{ runtimeOptions?: Record<string, unknown>; maxOutputTokensCap?: number }>({
    runtimeOptions: rule.object(),
    maxOutputTokensCap: rule.number({ min: 1, integer: true }),
  })(value, path);
};

const RETRY_RULES: OptionsShape<SessionRetryOptions> = { ...BACKOFF_OPTION_RULES, afterClientRetries: rule.boolean() };

const SESSION_OPTION_RULES: OptionsShape<SessionOptions> = {
  toolMode: rule.oneOf(...TOOL_MODES),
  tools: rule.required(rule.anyOf(rule.listOf(executorRule, 'a list of tool executors'), rule.function())),
  hostedSpecs: rule.listOf(rule.object()),
  provider: rule.shape<NonNullable<SessionOptions['provider']>>({
    namespaceTools: rule.boolean(),
    toolSearch: rule.boolean(),
    parallelToolCalls: rule.boolean(),
    originalImageDetail: rule.boolean(),
  }),
  hooks: rule.object(),
  transcriptPath: rule.string(),
  cwd: rule.string(),
  model: rule.shape<NonNullable<SessionOptions['model']>>({
    contextWindow: rule.number({ min: 1 }),
    name: rule.string(),
    autoCompactTokens: rule.number({ min: 0 }),
  }),
  codeMode: codeModeRule,
  approvalPolicy: rule.oneOf(...APPROVAL_POLICIES),
  sandboxMode: rule.oneOf(...SANDBOX_MODES),
  approvals: rule.object(),
  time: rule.object(),
  sessionId: rule.string(),
  tenant: rule.string(),
  instructions: rule.string(),
  maxSteps: rule.number({ min: 1, integer: true }),
  maxConcurrentToolCalls: rule.number({ min: 1, integer: true, allowInfinity: true }),
  maxModelRetries: rule.number({ min: 0, integer: true }),
  retry: rule.shape(RETRY_RULES),
  excludedCodeModeNamespaces: rule.listOf(rule.string()),
  // checked by the planner's own resolver, which names the field
  toolBudget: rule.any(),
  history: rule.listOf(rule.object(), 'a list of items'),
  strict: rule.boolean(),
  // a Tracer or { tracer, providerName?, agentName?, recordContent? }: checked by the tracing module
  tracer: rule.object(),
  toolDiscovery: rule.oneOf(...TOOL_DISCOVERY_MODES),
  toolSearch: rule.shape<NonNullable<SessionOptions['toolSearch']>>({ search: rule.function(), limit: rule.number({ min: 1, integer: true }) }),
  store: (value) => {
    const store = value as { lease?: unknown; load?: unknown; commit?: unknown } | null;
    return typeof store === 'object' && store !== null && typeof store.lease === 'function' && typeof store.load === 'function' && typeof store.commit === 'function'
      ? undefined
      : 'must be a SessionStore (e.g. `createSqliteStore(path)`)';
  },
  storeOptions: rule.shape<SessionStoreOptions>({
    owner: rule.string(),
    leaseTtlMs: rule.number({ min: 1, integer: true }),
    leaseWaitMs: rule.number({ min: 0, integer: true }),
    maxHistoryBytes: rule.number({ min: 1, integer: true }),
    maxStateBytes: rule.number({ min: 1, integer: true }),
  }),
  // checked by createSession, which names the field
  restore: rule.object(),
  background: rule.anyOf(rule.boolean(), rule.shape<{ maxUnobservedMs?: number; maxWakeTurns?: number }>({ maxUnobservedMs: rule.number({ min: 0, max: Number.MAX_SAFE_INTEGER, integer: true }), maxWakeTurns: rule.number({ min: 0, max: Number.MAX_SAFE_INTEGER, integer: true }) })),
};

/** Throws a `CONFIG` error naming the first unknown or invalid option of `createSession`. */
export function checkSessionOptions(options: unknown): asserts options is SessionOptions {
  checkOptions('createSession', options, SESSION_OPTION_RULES);
  // A plugin built for another protocol line fails here, at creation (a `tools` function: at the step that reads it).
  const tools = (options as SessionOptions).tools;
  if (!Array.isArray(tools)) return;
  for (const [index, executor] of tools.entries()) {
    const problem = typeof executor === 'object' && executor !== null && executor.name ? executorProtocolProblem(executor) : undefined;
    if (problem) throw new SwitchyardError('CONFIG', `createSession: option \`tools[${index}]\`: ${problem}`);
  }
}
