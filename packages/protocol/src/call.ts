import type { StepContext } from './context';
import type { ToolPayload } from './payload';
import type { ToolName } from './tool-name';
import type { ToolOutput } from './output';
import type { SwitchyardEvent } from './events';
import type { JsonValue } from './json';

/**
 * Who started a call: the model directly, or a Code Mode cell through
 * `await tools.x()`. Carried into hook payloads and events so a policy can tell them apart.
 */
export type ToolCallSource =
  | {
      /** The model made the call (a wire item). */
      readonly kind: 'direct';
    }
  | {
      /** A Code Mode cell made the call through `await tools.x()`. */
      readonly kind: 'code-mode';
      /** The cell that made the call. */
      readonly cellId: string;
      /** The runtime's id for the call inside the cell (`tool-1`, `tool-2`, …). */
      readonly runtimeToolCallId: string;
      /** The call was made between turns by a cell that outlived its turn (dispatched under the session's current policy). */
      readonly background?: true;
    };

/** The direct source (a shared frozen value). */
export const DIRECT_SOURCE: ToolCallSource = Object.freeze({ kind: 'direct' });

/** A tool call built by the router from a wire item (or by the broker for a nested call). */
export interface ToolCall {
  /** Exact tool identity to look up. */
  readonly toolName: ToolName;
  /** The model's `call_id` (nested calls get `exec-<uuid>`); every answer keeps it. */
  readonly callId: string;
  /** Arguments, input text or search arguments. */
  readonly payload: ToolPayload;
}

/**
 * Lets a handler call another registered tool through the same registry (hooks and all), e.g.
 * exec_command handing an `apply_patch` heredoc to the apply_patch tool. Optional on invocations.
 */
export interface ToolAccess {
  /** True when a tool with this exact name is registered. */
  has(name: ToolName): boolean;
  /** Dispatches a call with a fresh call id; resolves with the output (failures are outputs). Fatal errors reject. */
  call(name: ToolName, payload: ToolPayload, options?: { signal?: AbortSignal }): Promise<ToolOutput>;
}

/**
 * Everything a handler receives for one call. Built by the registry;
 * `signal` aborts when the turn is cancelled or the session shuts down.
 */
export interface ToolInvocation {
  /** The call id every answer carries (see {@link ToolCall.callId}). */
  readonly callId: string;
  /** Exact identity of the called tool (namespace + name), as the registry looked it up. */
  readonly toolName: ToolName;
  /** Who started the call: the model directly or a Code Mode cell. */
  readonly source: ToolCallSource;
  /** The payload, after any PreToolUse rewrite. */
  readonly payload: ToolPayload;
  /**
   * A function payload's arguments as the registry parsed them — once, when it validated them
   * against the spec's schema (after any PreToolUse rewrite). Absent for other payload kinds, for
   * an executor that skips input validation, and for an invocation not built by the registry:
   * read it through kit's `invocationArguments(invocation)`, which falls back to parsing. The
   * handler owns the value: the default hook inputs are parsed from the payload on their own, so
   * a hook runner that keeps or changes its input and a handler that changes its arguments never
   * see each other's changes (a hook changes a call only through `updatedInput`, which is
   * validated again).
   */
  readonly args?: JsonValue;
  /** Aborted on cancellation; handlers must stop and clean up (kill processes, stop timers). */
  readonly signal: AbortSignal;
  /** The step the call runs in. */
  readonly step: StepContext;
  /** Emits a lifecycle event on the registry's emitter (patch begin/end, exec begin/end, …). */
  readonly emit?: (event: SwitchyardEvent) => void;
  /** Calls other registered tools through the same loop. */
  readonly tools?: ToolAccess;
}
