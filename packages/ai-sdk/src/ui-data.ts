import type { ApprovalRequest, HookEndEvent, JsonValue, ResponseItem, ToolOutputBody } from '@switchyard/protocol';
import type { UIMessage } from 'ai';

/**
 * A tool call the model did not make itself: a Code Mode cell's `await tools.x()`, or a sibling
 * call a tool made through the loop. Sent as a `data-switchyard-call` part whose `id` is the call
 * id, updated in place as the call runs.
 */
export interface NestedCallData {
  /** The call's id (a nested call's `exec-<uuid>`). */
  readonly callId: string;
  /** Display name of the tool (`inventory__check_stock`). */
  readonly toolName: string;
  /** The arguments (parsed JSON), or the input text of a freeform tool. */
  readonly input?: JsonValue;
  /** `input` was over the stream's `maxInputChars`: the start of its text instead. */
  readonly inputPreview?: string;
  /** Who made the call: `code-mode` (a cell) or `direct` (a tool calling a sibling). */
  readonly caller: 'code-mode' | 'direct';
  /** The cell that made it, for `code-mode`. */
  readonly cellId?: string;
  /** The `exec` call that created that cell, when the stream saw the cell start. */
  readonly execCallId?: string;
  /** The runtime's id of the call inside its cell (`tool-1`). */
  readonly runtimeToolCallId?: string;
  /** Made between turns by a cell that outlived its turn. */
  readonly background?: true;
  readonly status: 'running' | 'approval-requested' | 'completed' | 'failed' | 'blocked' | 'aborted';
  /** Milliseconds the call ran (at its end). */
  readonly durationMs?: number;
  /** Why it failed, when it failed with an error (`code`, model-visible `message`). */
  readonly error?: { readonly code: string; readonly message: string };
  /** A PreToolUse hook's reason, for `blocked`. */
  readonly reason?: string;
  /** The pending approval's id, for `approval-requested`. */
  readonly approvalId?: string;
}

/** A Code Mode cell (`data-switchyard-cell`, `id` the cell id): started, then how it ended. */
export interface CellData {
  readonly cellId: string;
  /** The `exec` call that created it (its tool part's `toolCallId`). */
  readonly execCallId?: string;
  readonly status: 'running' | 'completed' | 'failed' | 'terminated';
  /** The script error, for `failed`. */
  readonly error?: string;
}

/** A hook run that ended (`data-switchyard-hook`, `id` the run id): the `hook-end` event's fields. */
export interface HookData {
  readonly runId: string;
  readonly event: HookEndEvent['event'];
  readonly toolName: string;
  /** The call the hook ran for, when it ran for one. */
  readonly callId?: string;
  readonly outcome: HookEndEvent['outcome'];
  readonly durationMs: number;
  readonly message?: string;
  readonly error?: string;
  readonly hook?: string;
  readonly required?: boolean;
}

/** Background work that ended (`data-switchyard-background`): what the model reads of it next. */
export interface BackgroundData {
  /** The model's call that started the work (`exec`, `exec_command`). */
  readonly callId: string;
  readonly cellId?: string;
  readonly processId?: number;
  readonly status: 'completed' | 'failed' | 'terminated';
  /** The delivered output item (its `output` is what the model reads). */
  readonly item: ResponseItem;
}

/**
 * An item without a part of its own (`data-switchyard-item`): a second output for a call (a cell's
 * `notify()`, a delivered background end), a developer message (hook context), an item type the
 * stream does not know. Kept whole so the history round-trips.
 */
export interface ItemData {
  readonly item: ResponseItem;
}

/** A UserPromptSubmit hook refused the input (`data-switchyard-prompt-blocked`): nothing was sent or recorded. */
export interface PromptBlockedData {
  readonly reason: string;
}

/** The data parts Switchyard sends, by name (`data-<name>` on the wire). */
export type SwitchyardDataTypes = {
  'switchyard-call': NestedCallData;
  'switchyard-cell': CellData;
  'switchyard-hook': HookData;
  'switchyard-background': BackgroundData;
  'switchyard-item': ItemData;
  'switchyard-prompt-blocked': PromptBlockedData;
};

/** A UI message of a Switchyard chat: `useChat<SwitchyardUIMessage>()` / `new Chat<SwitchyardUIMessage>()`. */
export type SwitchyardUIMessage = UIMessage<unknown, SwitchyardDataTypes>;

/**
 * What a `tool-approval-request` chunk carries as `approvalDescriptor` (the part's
 * `approval.descriptor`): the session's approval request without its signal, and for a nested
 * call (whose approval rides on its cell's `exec` part) the call it is for.
 */
export interface ApprovalDescriptor {
  readonly kind: ApprovalRequest['kind'];
  readonly toolName: string;
  readonly callId: string;
  readonly input?: JsonValue;
  readonly command?: string;
  readonly cwd?: string;
  readonly escalated?: boolean;
  /** True when the approval is for a nested call of the cell whose `exec` part carries it. */
  readonly nested?: true;
}

/** One output body as the model reads it, as text (images as `[image]`). */
export function outputBodyText(output: ToolOutputBody): string {
  if (typeof output === 'string') return output;
  return output.map((item) => (item.type === 'input_text' ? item.text : '[image]')).join('\n');
}
