import type { JsonObject, JsonValue } from './json';
import type { ToolFailureCode } from './output';
import type { ToolCallSource } from './call';
import type { StepContext } from './context';

/**
 * The caller field every hook payload carries (beyond the reference): `{kind:"direct"}` or
 * `{kind:"code-mode", cell_id}`. Serialized as `caller` on hook stdin.
 */
export type HookCaller =
  | {
      /** The model called the tool directly. */
      readonly kind: 'direct';
    }
  | {
      /** A Code Mode cell called the tool. */
      readonly kind: 'code-mode';
      /** The calling cell's id (snake_case: it is written to hook stdin as is). */
      readonly cell_id: string;
      /** Set when the cell made the call between turns (it outlived its turn). */
      readonly background?: true;
    };

/** Converts a {@link ToolCallSource} to the hook caller field. */
export function hookCaller(source: ToolCallSource): HookCaller {
  if (source.kind === 'direct') return { kind: 'direct' };
  return source.background ? { kind: 'code-mode', cell_id: source.cellId, background: true } : { kind: 'code-mode', cell_id: source.cellId };
}

/**
 * What a tool tells hooks about a call: the canonical hook tool name (`Bash`,
 * `apply_patch`, a display name), aliases matchers also try (`Write`, `Edit`; never written to stdin),
 * and the input (`{command}` for shell and apply_patch, parsed arguments for function tools).
 */
export interface HookToolInput {
  /** Canonical hook tool name: written to stdin as `tool_name` and tried first by matchers. */
  readonly toolName: string;
  /** Extra names matchers also try (`Write`, `Edit`); never written to stdin. */
  readonly aliases?: readonly string[];
  /** Written to stdin as `tool_input` (`{command}` for shell and apply_patch, parsed arguments for function tools). */
  readonly toolInput: JsonValue;
  /**
   * The `tool_use_id` hooks see when it is not the call's own: the write_stdin poll that sees an
   * exec_command process finish reports the exec_command's PostToolUse with that call's id.
   */
  readonly toolUseId?: string;
}

/** A PreToolUse request from the registry to a {@link HookRunner}. */
export interface PreToolUseRequest extends HookToolInput {
  /** The call id (`tool_use_id`). */
  readonly toolUseId: string;
  /** Who made the call; serialized as `caller`. */
  readonly caller: HookCaller;
  /** The step the call runs in (source of `session_id`, `turn_id`, `cwd`, `model`). */
  readonly step: StepContext;
  /** Aborted when the call is cancelled; runners should kill their processes. */
  readonly signal: AbortSignal;
}

/** A PostToolUse request: the pre fields plus what the tool answered. */
export interface PostToolUseRequest extends PreToolUseRequest {
  /** The tool's response as hooks see it (text → JSON string; JSON outputs → the value). */
  readonly toolResponse: JsonValue;
}

/**
 * A PostToolUseFailure request: the pre fields plus why the call failed. Sent by the registry when
 * a call's handler ran and failed — it threw (anything but a cancellation or an approval
 * refusal) or answered a failed output (`success: false`: an MCP error result, a timeout, a
 * command the sandbox stopped). Never for a success, a blocked, refused or cancelled call.
 */
export interface PostToolUseFailureRequest extends PreToolUseRequest {
  /** The failure text the model would read (`error` on stdin). */
  readonly error: string;
  /** What kind of failure (`error_code` on stdin): the thrown error's code, the output's `failureCode`, else `RESPOND_TO_MODEL`. */
  readonly errorCode: ToolFailureCode;
}

/**
 * The aggregated PreToolUse result. `blocked` wins over `updatedInput`;
 * `additionalContexts` are recorded even when blocking; `warnings` are for the host's log.
 */
export interface PreToolUseOutcome {
  /** True when some hook blocked the call: the handler does not run and the model reads a failure. */
  readonly blocked: boolean;
  /** The first blocking reason in configured order (set when `blocked`). */
  readonly reason?: string;
  /** The rewritten input from the hook that finished last (only when not blocked). */
  readonly updatedInput?: JsonValue;
  /**
   * Texts the hooks add to the conversation (as developer messages after the call's output); kept even when
   * blocked.
   */
  readonly additionalContexts: readonly string[];
  /** Hook failures (fail-open) and other problems, for the host's log; the registry does not act on them. */
  readonly warnings?: readonly string[];
}

/**
 * The aggregated PostToolUse result: `feedback` (joined with "\n\n") replaces what the model sees;
 * `stop` also ends the model's use of the output with the stop reason as feedback.
 */
export interface PostToolUseOutcome {
  /** When set, replaces the output text the model reads; Code Mode results and logs keep the original. */
  readonly feedback?: string;
  /** True when a hook stopped execution; without feedback the model reads "PostToolUse hook stopped execution". */
  readonly stop?: boolean;
  /** Texts the hooks add to the conversation (as developer messages after the call's output). */
  readonly additionalContexts: readonly string[];
  /** Hook failures (fail-open) and other problems, for the host's log; the registry does not act on them. */
  readonly warnings?: readonly string[];
}

/**
 * The policy seam the registry calls around every handler that has a hook payload. Implemented by
 * `@switchyard/hooks` (`createHookEngine`) or by the host. Must not throw for hook failures:
 * failed hooks fail open and are reported in `warnings`. A throw is treated as fail-open by the registry.
 */
export interface HookRunner {
  /**
   * Runs the matching PreToolUse hooks before a handler. Called by the registry once per call with a hook
   * payload; a rejection fails open (the call proceeds).
   */
  runPreToolUse(request: PreToolUseRequest): Promise<PreToolUseOutcome>;
  /**
   * Runs the matching PostToolUse hooks after a successful handler (only when a post payload exists); a
   * rejection fails open.
   */
  runPostToolUse(request: PostToolUseRequest): Promise<PostToolUseOutcome>;
  /**
   * Runs the matching PostToolUseFailure hooks after a failed handler (optional: a runner without
   * it has none). `feedback` replaces the failure text the model reads; a rejection fails open.
   */
  runPostToolUseFailure?(request: PostToolUseFailureRequest): Promise<PostToolUseOutcome>;
  /**
   * Whether any hook of `event` would run for a tool called `toolName` (or one of `aliases`).
   * Optional: the registry asks before it bounds and sends a PostToolUse input, so an output no
   * hook reads is neither copied nor withheld for its size; a runner without it (or one that throws)
   * is treated as matching every call. Synchronous, no side effects.
   */
  hasToolHooks?(event: 'PreToolUse' | 'PostToolUse', request: { readonly toolName: string; readonly aliases?: readonly string[] }): boolean;
  /** SessionStart hooks, when the session is created (optional: a runner without it has none). */
  runSessionStart?(request: SessionStartRequest): Promise<LifecycleHookOutcome>;
  /** UserPromptSubmit hooks, before a turn's input reaches the model: they may block it or add context. */
  runUserPromptSubmit?(request: UserPromptSubmitRequest): Promise<LifecycleHookOutcome>;
  /** Stop hooks, when the model answered without tool calls: `blocked` asks the loop to continue with `reason` as the next input. */
  runStop?(request: StopRequest): Promise<LifecycleHookOutcome>;
  /** SessionEnd hooks, at `shutdown()`. */
  runSessionEnd?(request: SessionEndRequest): Promise<LifecycleHookOutcome>;
  /** PermissionRequest hooks, before the approval provider is asked: they may allow or deny instead. */
  runPermissionRequest?(request: PermissionRequestRequest): Promise<PermissionRequestOutcome>;
  /** Interrupt hooks, once when a turn is aborted: they observe, nothing is decided. */
  runInterrupt?(request: InterruptRequest): Promise<LifecycleHookOutcome>;
}

/** The hook event names a {@link HookRunner} may run. */
export type HookEventName =
  | 'PreToolUse'
  | 'PostToolUse'
  | 'PostToolUseFailure'
  | 'PermissionRequest'
  | 'SessionStart'
  | 'UserPromptSubmit'
  | 'Stop'
  | 'SessionEnd'
  | 'Interrupt';

/** What every lifecycle hook input carries (`session_id`, `cwd`, `transcript_path`, …). */
export interface LifecycleHookRequestBase {
  readonly sessionId: string;
  /** The turn, for events inside one (UserPromptSubmit, Stop, PermissionRequest). */
  readonly turnId?: string;
  readonly cwd: string;
  readonly model?: string;
  /** The approval policy (`permission_mode`); `default` when absent. */
  readonly permissionMode?: string;
  /** A transcript file the host keeps (`transcript_path`); `null` on stdin when absent. */
  readonly transcriptPath?: string;
  readonly signal: AbortSignal;
}

/** SessionStart: `source` is `startup` (a new session) or `resume` (created with a saved history). */
export interface SessionStartRequest extends LifecycleHookRequestBase {
  readonly source: 'startup' | 'resume';
}

/** UserPromptSubmit: the turn's input text (`prompt`). */
export interface UserPromptSubmitRequest extends LifecycleHookRequestBase {
  readonly prompt: string;
}

/** Stop: `stopHookActive` is true when this turn already continued because of a Stop hook. */
export interface StopRequest extends LifecycleHookRequestBase {
  readonly stopHookActive: boolean;
  readonly lastAssistantMessage?: string;
}

/** SessionEnd: why the session ended (`shutdown`). */
export interface SessionEndRequest extends LifecycleHookRequestBase {
  readonly reason: string;
}

/**
 * Why a turn was interrupted: `signal` (the abort signal the host passed to the turn), `abort`
 * (`turn.abort()`), `stream-closed` (the host stopped reading `streamTurn`), `shutdown`
 * (`session.shutdown()` while the turn ran).
 */
export type InterruptReason = 'signal' | 'abort' | 'stream-closed' | 'shutdown';

/** Interrupt: a turn was aborted (`turnId` is set). */
export interface InterruptRequest extends LifecycleHookRequestBase {
  readonly reason: InterruptReason;
  /** The abort reason's text, when the host gave one (`turn.abort(new Error('user pressed Esc'))`). */
  readonly detail?: string;
}

/** PermissionRequest: the call that needs approval. */
export interface PermissionRequestRequest extends LifecycleHookRequestBase, HookToolInput {
  readonly toolUseId: string;
}

/** What lifecycle hooks decided, aggregated like PreToolUse (first blocking reason, every context). */
export interface LifecycleHookOutcome {
  /** UserPromptSubmit: the prompt is refused. Stop: the loop continues with `reason`. */
  readonly blocked: boolean;
  readonly reason?: string;
  /** Texts the hooks add to the conversation (developer messages before the next request). */
  readonly additionalContexts: readonly string[];
  readonly warnings?: readonly string[];
}

/** The PermissionRequest verdict: any deny wins, else an allow, else none (the approval provider decides). */
export interface PermissionRequestOutcome {
  readonly decision?: 'allow' | 'deny';
  /** The deny message. */
  readonly message?: string;
  readonly warnings?: readonly string[];
}

/** One call of {@link McpToolCaller.callTool}: a tool of a configured MCP server. */
export interface McpToolCallRequest {
  /** The server's name in the configuration (`mcpServers` of the hook engine). */
  readonly server: string;
  /** The tool's raw MCP name, as the server lists it. */
  readonly tool: string;
  /** The call's arguments (an `mcp_tool` hook sends its stdin object). */
  readonly arguments: JsonObject;
  /** Aborted when the caller gives up (timeout, cancellation): the server then receives `notifications/cancelled`. */
  readonly signal: AbortSignal;
}

/** What an MCP tool answered (`CallToolResult`): an error result resolves with `isError: true`. */
export interface McpToolCallResult {
  readonly isError: boolean;
  /** The content blocks as the server sent them (`{ type: 'text', text }`, images, …). */
  readonly content: readonly JsonValue[];
  readonly structuredContent?: JsonObject;
}

/**
 * Calls tools of configured MCP servers for `mcp_tool` hook handlers. `@switchyard/hooks` holds no
 * MCP client: `@switchyard/mcp` implements this (`createMcpToolCaller`) with the same connection
 * code `mcpTools` uses, and the hook engine takes the factory (`mcpToolCaller`).
 */
export interface McpToolCaller {
  /**
   * Calls one tool. Resolves with its result (an error result included); rejects when the server
   * is not configured, cannot be started, dies or closes the connection during the call, or
   * `signal` aborts.
   */
  callTool(request: McpToolCallRequest): Promise<McpToolCallResult>;
  /** Ends every connection it opened (stdio servers are stopped). Idempotent; never rejects. */
  close(): Promise<void>;
}

/**
 * Makes a {@link McpToolCaller} over a server configuration (the `servers` map `mcpTools` takes);
 * `@switchyard/mcp`'s `createMcpToolCaller` is one. Throws a `CONFIG` error for an invalid configuration.
 * (A method's type, so a factory typed with the narrower server configuration is accepted.)
 */
export type McpToolCallerFactory = { create(servers: Readonly<Record<string, object>>): McpToolCaller }['create'];
