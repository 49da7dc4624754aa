import type { ApprovalPolicy, ApprovalProvider, SandboxMode, TimeProvider } from './providers';

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
}
