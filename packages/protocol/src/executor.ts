import type { ToolInvocation } from './call';
import type { HookToolInput } from './hooks';
import type { JsonValue } from './json';
import type { ToolOutput } from './output';
import type { ToolPayload, ToolPayloadKind } from './payload';
import type { ExecutorToolSpec } from './tool-spec';
import type { ToolName } from './tool-name';
import type { SandboxMode } from './providers';

/**
 * Where a tool appears:
 * - `direct` (default): in the model's `tools`, registered, callable from Code Mode, removed from
 *   the top level in `code-mode-only`.
 * - `direct-model-only`: visible and registered, never callable from Code Mode, stays top-level in `code-mode-only`.
 * - `deferred`: registered and callable from Code Mode, hidden from the model until `tool_search` finds it.
 * - `hidden`: registered only (dispatchable by exact name), never parallel.
 */
export type ToolExposure = 'direct' | 'direct-model-only' | 'deferred' | 'hidden';

/**
 * How a tool talks to PreToolUse / PostToolUse hooks. Function tools get the
 * default `{tool_name: display name, tool_input: parsed arguments}` without an adapter; freeform tools
 * get no hooks unless they supply one. Each method returns `undefined` to skip hooks for that call.
 */
export interface HookPayloadAdapter {
  /** The PreToolUse input, or `undefined` for none. */
  pre?(invocation: ToolInvocation): HookToolInput | undefined;
  /** The PostToolUse input and response, or `undefined` for none (e.g. a process still running). */
  post?(invocation: ToolInvocation, output: ToolOutput): { input: HookToolInput; response: JsonValue } | undefined;
  /**
   * Applies a hook's `updatedInput`, returning the new payload. Throw a `RespondToModelError` when
   * the shape is wrong (e.g. "hook returned updatedInput without string field `command`").
   */
  rewrite?(invocation: ToolInvocation, updatedInput: JsonValue): ToolPayload;
}

/**
 * The contract every tool implements — built-ins, MCP tools, plugins and `exec`/`wait`.
 * Three members are required; the rest are optional capabilities with documented defaults.
 * Executors are plain objects (use `defineFunctionTool` / `defineFreeformTool` of `@switchyard/kit`).
 */
export interface ToolExecutor {
  /** Exact identity; the registry looks calls up by it. */
  readonly name: ToolName;
  /** The spec the model sees (a namespaced function is wrapped into a namespace spec by the planner). */
  readonly spec: ExecutorToolSpec;
  /**
   * Runs one call. Return a {@link ToolOutput}. Throw `RespondToModelError` for a model-visible
   * refusal, `FatalToolError` to end the turn; any other throw becomes a model-visible failure
   * naming the tool. Must honour `invocation.signal`.
   */
  handle(invocation: ToolInvocation): Promise<ToolOutput>;
  /** Default `direct`. */
  readonly exposure?: ToolExposure;
  /** May run concurrently with other parallel-safe calls (shared gate slot). Default false. */
  readonly supportsParallelToolCalls?: boolean;
  /** On cancellation, the runtime awaits the handler's teardown instead of abandoning it (code-mode `wait`). Default false. */
  readonly waitsForCancellation?: boolean;
  /** Payload kinds accepted; default from the spec: function → `function`, custom → `custom`, tool_search → `tool-search`. */
  readonly payloadKinds?: readonly ToolPayloadKind[];
  /** Description of the namespace this tool belongs to (first non-blank one wins when merged). */
  readonly namespaceDescription?: string;
  /** Extra words for the `tool_search` index (deferred tools only). */
  readonly searchText?: string;
  /** Hook adapter, or `false` for no hooks at all (code-mode `wait`). */
  readonly hookPayload?: HookPayloadAdapter | false;
  /**
   * The version of `@switchyard/protocol` the executor was built against (`defineFunctionTool` and
   * `defineFreeformTool` stamp the version their protocol copy reports). A host refuses an executor
   * of another contract line at registration with a `CONFIG` error naming both versions
   * ({@link executorProtocolProblem}); absent, the executor is taken as compatible.
   */
  readonly protocolVersion?: string;
  /** Abort message style: `shell` gives "Wall time: X seconds\naborted by user". Default `default`. */
  readonly abortStyle?: 'default' | 'shell';
  /**
   * Running the tool twice with the same arguments has the effect of running it once (a read, a
   * put of a value). A Code Mode cell resumed after its agent host restarted runs such a call again
   * when it was in flight; any other tool's call fails there as interrupted. Default false.
   */
  readonly idempotent?: boolean;
  /** Skip ajv validation of function arguments (the handler validates itself). Default false. */
  readonly skipInputValidation?: boolean;
  /**
   * Reads a function call's arguments text in the tool's own words, instead of the registry's JSON
   * parse and schema validation: returns the arguments the handler gets as `invocation.args`, or
   * throws a `RespondToModelError` (code `INVALID_INPUT`) with the model-visible text. The built-in
   * exec tools answer as the reference's serde does (`failed to parse function arguments: missing
   * field \`cmd\` at line 1 column 2`) and ignore unknown properties.
   */
  readonly parseArguments?: (text: string) => JsonValue;
  /**
   * Called by the session when a turn ends (e.g. exec_command kills that turn's processes). Several
   * executors may share one function; the session calls each distinct function once. Must not throw.
   */
  readonly onTurnEnd?: (turnId: string) => Promise<void> | void;
  /**
   * Called once by each session that holds the executor, at its shutdown (kill processes, close
   * connections), with the ending session's id: an executor shared by several sessions ends only
   * what belongs to that one. Shared functions are called once per session.
   */
  readonly dispose?: (context?: { readonly sessionId: string }) => Promise<void> | void;
  /**
   * Called once by the session at creation: problems the host should hear of before the model
   * meets them (exec_command on a machine without a usable sandbox). Each becomes a `warning`
   * event. Must not throw.
   */
  readonly checkSetup?: (context: { readonly cwd: string; readonly sandboxMode?: SandboxMode }) => Promise<readonly string[]>;
  /**
   * Work this executor keeps running for a session past the call that started it (exec_command's
   * processes with `processScope: 'session'`). A session that persists itself (`createSession({
   * store })`) reads it at each commit, so a session resumed by another process can tell the model
   * which work was lost with the restart. Shared functions are called once. Synchronous; must not throw.
   */
  readonly runningWork?: (context: { readonly sessionId: string }) => readonly RunningWork[];
}

/** The payload kinds an executor accepts (its own list, or the default derived from its spec). */
export function executorPayloadKinds(executor: ToolExecutor): readonly ToolPayloadKind[] {
  if (executor.payloadKinds) return executor.payloadKinds;
  switch (executor.spec.type) {
    case 'custom':
      return ['custom'];
    case 'tool_search':
      return ['tool-search'];
    default:
      return ['function'];
  }
}

/** The executor's exposure, defaulting to `direct`. */
export function executorExposure(executor: ToolExecutor): ToolExposure {
  return executor.exposure ?? 'direct';
}

/** One piece of work an executor keeps running past its call (see {@link ToolExecutor.runningWork}). */
export interface RunningWork {
  /** The model's call that started it (e.g. the `exec_command` call). */
  readonly callId: string;
  /** The id the model uses to reach it (`exec_command`'s session id for `write_stdin`), when it has one. */
  readonly processId?: number;
  /** What it runs, as the model wrote it (exec_command's `cmd`). */
  readonly command: string;
}
