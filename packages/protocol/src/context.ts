import type { ApprovalPolicy, ApprovalProvider, SandboxMode, TimeProvider } from './providers';
import type { ToolOutputItem } from './wire';

/** How a plan exposes tools to the model. */
export type ToolMode = 'direct' | 'code-mode' | 'code-mode-only';
/** Every {@link ToolMode}, for option checks. */
export const TOOL_MODES: readonly ToolMode[] = ['direct', 'code-mode', 'code-mode-only'];

/** What the model provider can take. */
export interface ProviderCapabilities {
  /** Namespace specs are accepted; without it, namespaced tools are registered but invisible. Default true. */
  readonly namespaceTools?: boolean;
  /** `tool_search` is accepted (also needs `namespaceTools`). Default false. */
  readonly toolSearch?: boolean;
  /** The model may emit several tool calls in one response. Default true. */
  readonly parallelToolCalls?: boolean;
  /** The model accepts `detail: "original"` images. Default false (the detail is dropped). */
  readonly originalImageDetail?: boolean;
}

/**
 * The context-window status of a step: the configured window and what is used. `windowTokens`
 * is `null` when no limit is known. Token counts are model tokens.
 */
export interface ContextWindowStatus {
  /** The configured context window, or `null` if unknown. */
  readonly windowTokens: number | null;
  /** Tokens used so far (last reported usage). */
  readonly usedTokens: number;
  /** Optional auto-compaction limit; tokens left are counted up to it when set. */
  readonly autoCompactTokens?: number | null;
}

/**
 * Everything a step knows when it is planned, captured once per sampling step. Handlers
 * read it from their invocation; the planner reads it to decide exposure. Treat as immutable.
 */
export interface StepContext {
  /** The host session this step belongs to. */
  readonly sessionId: string;
  /**
   * Who the session belongs to (`createSession({ tenant })`): Code Mode opens the session's cells
   * with it (sessions of one tenant may share a worker process), and tools that share resources
   * across sessions group them by it. Absent: the session is a tenant of its own.
   */
  readonly tenant?: string;
  /** The turn id (unique per `beginTurn`). */
  readonly turnId: string;
  /** Increasing step number within the turn, starting at 1. */
  readonly stepIndex: number;
  /** Workspace root for file and process tools (absolute path). */
  readonly cwd: string;
  /** The plan's tool mode. */
  readonly toolMode: ToolMode;
  /** What the provider accepts. */
  readonly provider: ProviderCapabilities;
  /** The model's name, for hook payloads (`model`). */
  readonly model?: string;
  /** Context-window status at capture time (read by get_context_remaining). */
  readonly contextWindow?: ContextWindowStatus;
  /** The session's clock. */
  readonly time?: TimeProvider;
  /** The session's approval policy for process tools. */
  readonly approvalPolicy?: ApprovalPolicy;
  /** The session's sandbox mode for process tools. */
  readonly sandboxMode?: SandboxMode;
  /** Asks a person; absent means nobody can be asked. */
  readonly approvals?: ApprovalProvider;
  /**
   * State shared by every call of the turn (e.g. apply_patch's turn-diff tracker). Keys should be
   * symbols or package-scoped strings (`"@switchyard/tool-apply-patch:diff"`).
   */
  readonly turnState: Map<string | symbol, unknown>;
  /**
   * Where work that outlives its call reports its end (a yielded Code Mode cell, a process still
   * running when `exec_command` answered). Present only when the host delivers background
   * completions (`createSession({ background })`); absent, the model observes such work with
   * `wait` / `write_stdin` as before.
   */
  readonly background?: BackgroundDelivery;
  /**
   * Where a search from a Code Mode cell (`await tools.tool_search({ query })`) reports the tools it
   * found, so later steps can show the model their declarations. Present when the host keeps
   * discoveries (a session always does); absent, a search only answers its cell.
   */
  readonly toolDiscovery?: ToolDiscoverySink;
}

/**
 * How a host shows the model the tools its cells found, from the next step on:
 * - `tools`: the found tools join the plan of later steps (described in the `exec` description in
 *   `code-mode-only`, visible in `code-mode`), so the request's `tools` change after a discovery;
 * - `conversation`: the request's `tools` stay as they were and the declarations arrive as a
 *   conversation item, which keeps the cached prompt prefix.
 */
export type ToolDiscoveryMode = 'tools' | 'conversation';

/** Every {@link ToolDiscoveryMode}, for option checks. */
export const TOOL_DISCOVERY_MODES: readonly ToolDiscoveryMode[] = ['tools', 'conversation'];

/** The host's record of what cells found, shared by every step of a session. Never throws. */
export interface ToolDiscoverySink {
  /** Called once per successful search from a cell, with every tool it returned (new or not). */
  found(discovery: ToolDiscovery): void;
}

/** One search from a cell and what it returned, best match first. */
export interface ToolDiscovery {
  /** The nested call's id (`exec-…`). */
  readonly callId: string;
  /** The cell that searched, when the call came from one. */
  readonly cellId?: string;
  /** The query as the cell gave it (trimmed). */
  readonly query: string;
  /** The tools found, best match first (at most the call's limit). */
  readonly tools: readonly DiscoveredTool[];
}

/** A tool a search found, as the cell received it. */
export interface DiscoveredTool {
  /** The registered tool's display name (`weather__get_forecast`): the key a host records it under. */
  readonly toolName: string;
  /** Its JS identifier under `tools.` in a cell. */
  readonly name: string;
  /** The tool's own description. */
  readonly description: string;
  /** Its TypeScript declaration (`declare const tools: { … };`). */
  readonly declaration: string;
}

/**
 * The host's inbox for background completions, shared by every step of a session. A tool that
 * left work running calls `complete` once when that work ends (and only if no call of the model
 * observed the end first); the host puts `item` into the model's next request and tells its
 * listeners. Never throws.
 */
export interface BackgroundDelivery {
  /** Delivers one completion (at most once per piece of work). After `signal` aborted it is ignored. */
  complete(completion: BackgroundCompletion): void;
  /** The most a cell may run unobserved (ms) before it is terminated; `undefined`: no bound. */
  readonly maxUnobservedMs?: number;
  /** Aborted when the session shuts down: watchers stop, nothing more is delivered. */
  readonly signal: AbortSignal;
}

/** One piece of background work that ended, with what the model reads of it. */
export interface BackgroundCompletion {
  /** The model's call that started the work (`exec`, `exec_command`); `item` answers it. */
  readonly callId: string;
  /** The Code Mode cell, for a cell. */
  readonly cellId?: string;
  /** The process id `exec_command` answered with (`session_id` for `write_stdin`), for a process. */
  readonly processId?: number;
  /** `completed`; `failed` (a script error, a non-zero exit code); `terminated` (stopped before it finished). */
  readonly status: 'completed' | 'failed' | 'terminated';
  /** The final output as the model reads it: an output item for `callId`, under the usual output budget. */
  readonly item: ToolOutputItem;
}
