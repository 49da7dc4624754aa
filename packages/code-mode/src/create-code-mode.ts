import type {
  CodeModeContributor,
  CodeModeRuntime,
  CodeModeSurface,
  CustomToolCallOutputItem,
  StepContext,
  ToolExecutor,
} from '@switchyard/protocol';
import { DEFAULT_OUTPUT_TOKENS, checkOptions, optionRules as rule, type OptionRule, type OptionsShape } from '@switchyard/kit';
import { CodeModeService, type CellEvent } from './code-mode-service';
import { createExecTool, createWaitTool, type CodeModeToolOptions } from './code-mode-tools';
import type { NestedWorker } from './dispatch-broker';

export interface CreateCodeModeOptions {
  /** The runtime cells run in (`createCodeModeRuntime()` from `@switchyard/code-mode-runtime`). */
  runtime: CodeModeRuntime;
  /** Default yield time of `exec` and `wait` in ms. Default 10 000. */
  defaultYieldTimeMs?: number;
  /** Default output budget in tokens. Default 10 000. */
  defaultMaxOutputTokens?: number;
  /** Host cap on every output budget (pragma and `wait.max_tokens`). Default: none. */
  maxOutputTokensCap?: number;
  /** Host cap in ms on every yield time (pragma `yield_time_ms`, `wait.yield_time_ms`, the default), for every session. Default: none. */
  maxYieldTimeMs?: number;
  /** Fire hooks for the outer `exec` call with `tool_input: { code }`. Default true. */
  execHooks?: boolean;
  /**
   * The tenant of every session whose step names none (`StepContext.tenant`, which
   * `createSession({ tenant })` sets), passed to `runtime.openSession`. Default: none — each such
   * session is a tenant of its own.
   */
  tenant?: string;
}

/** Code Mode for a host: the planner's contributor plus the per-session service. */
export interface CodeMode extends CodeModeContributor {
  readonly service: CodeModeService;
  /**
   * Attaches the running step's worker (its `ToolCallRuntime`) for a host session; returns the
   * detach function. `background`: a worker serving cells between turns (its calls' source says so).
   * `tenant`: the session's tenant, used if this call opens the session in the runtime.
   */
  attachWorker(sessionId: string, worker: NestedWorker, options?: { background?: boolean; tenant?: string }): () => void;
  /** `notify()` items injected in a host session since the last call. */
  takeInjected(sessionId: string): CustomToolCallOutputItem[];
  /** `cell-start` / `cell-end` events of every session; returns the unsubscribe function. */
  onCellEvent(listener: (event: CellEvent) => void): () => void;
  /** Shuts every code-mode session down. */
  shutdown(): Promise<void>;
}

const runtimeRule: OptionRule = (value) => {
  const runtime = value as { openSession?: unknown } | null;
  return typeof runtime === 'object' && runtime !== null && typeof runtime.openSession === 'function'
    ? undefined
    : 'must be a CodeModeRuntime (e.g. `createCodeModeRuntime()` from @switchyard/code-mode-runtime)';
};

const CODE_MODE_OPTION_RULES: OptionsShape<CreateCodeModeOptions> = {
  runtime: rule.required(runtimeRule),
  // the same range as the pragma's fields: non-negative safe integers
  defaultYieldTimeMs: rule.number({ min: 0, max: Number.MAX_SAFE_INTEGER, integer: true }),
  defaultMaxOutputTokens: rule.number({ min: 0, max: Number.MAX_SAFE_INTEGER, integer: true }),
  maxOutputTokensCap: rule.number({ min: 1, integer: true }),
  maxYieldTimeMs: rule.number({ min: 0, max: Number.MAX_SAFE_INTEGER, integer: true }),
  execHooks: rule.boolean(),
  tenant: rule.string(),
};

/**
 * Creates Code Mode for a host: `executors(surface, step)` gives the planner the `exec` and `wait`
 * executors for a step's nested surface; the service opens one code-mode session per host session.
 * Unknown or invalid options are a `CONFIG` error naming the option (and the closest valid one).
 */
export function createCodeMode(options: CreateCodeModeOptions): CodeMode {
  checkOptions('createCodeMode', options, CODE_MODE_OPTION_RULES);
  const service = new CodeModeService(options.runtime, options.tenant);
  const toolOptions: CodeModeToolOptions = {
    defaultYieldTimeMs: options.defaultYieldTimeMs ?? 10_000,
    defaultMaxOutputTokens: options.defaultMaxOutputTokens ?? DEFAULT_OUTPUT_TOKENS,
    maxOutputTokensCap: options.maxOutputTokensCap,
    maxYieldTimeMs: options.maxYieldTimeMs,
    execHooks: options.execHooks ?? true,
  };
  return {
    service,
    executors(surface: CodeModeSurface, step: StepContext): readonly ToolExecutor[] {
      // a host delivering background completions tells the model it need not poll
      const background = step.background !== undefined;
      return [createExecTool(service, surface, { ...toolOptions, background }), createWaitTool(service, toolOptions)];
    },
    attachWorker: (sessionId, worker, attach) => service.attachWorker(sessionId, worker, attach),
    takeInjected: (sessionId) => service.takeInjected(sessionId),
    onCellEvent: (listener) => service.onCellEvent(listener),
    shutdown: () => service.shutdown(),
  };
}
