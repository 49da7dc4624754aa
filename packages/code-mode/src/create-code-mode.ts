import type {
  BackgroundDelivery,
  RestoreResult,
  CodeModeContributor,
  CodeModeRuntime,
  CodeModeSurface,
  CustomToolCallOutputItem,
  StepContext,
  ToolExecutor,
} from '@switchyard/protocol';
import { DEFAULT_OUTPUT_TOKENS } from '@switchyard/kit';
import { checkOptions, optionRules as rule, type OptionRule, type OptionsShape } from '@switchyard/kit/internal';
import { CodeModeService, type CellEvent, type CodeModeJournalUpdate, type CodeModeState } from './code-mode-service';
import { createExecTool, createWaitTool, watchCell, type CodeModeToolOptions } from './code-mode-tools';
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
   * Each change to a host session's durable state as it happens (the runtime's `CellHost.journal`
   * updates, with the host session's id): a store writes them ahead — a nested call runs only once
   * the promise returned for its `call-issued` resolved (a rejection fails the call, the tool not
   * run). A `cell-opened` update also carries what dispatches the cell's calls (`broker`); a
   * `cell-closed` update carries the cell's final journal (what `replayCells` re-runs). A store
   * may also listen per session (`service.onJournal`).
   */
  journal?: (sessionId: string, update: CodeModeJournalUpdate) => void | Promise<void>;
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
  /** A host session's durable state for a store (`CodeModeService.exportState`); undefined when it has none. */
  exportState(sessionId: string): CodeModeState | undefined;
  /**
   * Restores a host session from an exported state and the journal updates reported after it
   * (`CodeModeService.restore`), before its first `exec`. With `background` (the session's
   * `StepContext.background`), every resumed cell is watched, so its end reaches the model as its
   * `exec` call's background completion; without, a `wait` gets it. A cell that could not be
   * resumed is in the result with its error (the host tells the model; a `wait` on it gets it too).
   */
  restoreSession(sessionId: string, state: CodeModeState, options?: RestoreSessionOptions): Promise<RestoreResult>;
}

/** Options of {@link CodeMode.restoreSession}. */
export interface RestoreSessionOptions {
  /** The agent host restarted (default true): a nested call that was in flight is interrupted, unless its tool is idempotent. */
  hostRestarted?: boolean;
  /** The updates reported after `state` was exported (the `journal` option's, `service.onJournal`'s), in order. */
  journal?: readonly CodeModeJournalUpdate[];
  /** Deliver each restored cell's end in the background (the session's delivery). */
  background?: BackgroundDelivery;
  /** The tenant the session opens with (`createSession({ tenant })`'s); default: the `tenant` option of createCodeMode. */
  tenant?: string;
  /** As `ProviderOptions.originalImageDetail` for the delivered outputs. */
  originalImageDetail?: boolean;
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
  journal: rule.function(),
  tenant: rule.string(),
};

/**
 * Creates Code Mode for a host: `executors(surface, step)` gives the planner the `exec` and `wait`
 * executors for a step's nested surface; the service opens one code-mode session per host session.
 * Unknown or invalid options are a `CONFIG` error naming the option (and the closest valid one).
 */
export function createCodeMode(options: CreateCodeModeOptions): CodeMode {
  checkOptions('createCodeMode', options, CODE_MODE_OPTION_RULES);
  const service = new CodeModeService(options.runtime, options.journal, options.tenant);
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
    exportState: (sessionId) => service.exportState(sessionId),
    async restoreSession(sessionId, state, restore = {}) {
      const result = await service.restore(sessionId, state, { hostRestarted: restore.hostRestarted, journal: restore.journal, tenant: restore.tenant });
      const { background, originalImageDetail } = restore;
      if (background) {
        const session = service.session(sessionId);
        for (const cell of result.cells) if (cell.resumed) watchCell(service, session, cell.cellId, { background, originalImageDetail }, toolOptions);
      }
      return result;
    },
  };
}
