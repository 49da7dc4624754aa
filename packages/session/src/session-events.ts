import type { ModelProviderInfo, ModelRequest, ModelUsage, ResponseItem, SwitchyardError, SwitchyardEvent, ToolOutputItem } from '@switchyard/protocol';
import type { ToolPlan } from '@switchyard/planner';
import type { SessionWarningEvent } from './session-hooks';
import type { BackgroundCompleteEvent } from './background';

/** What a turn run by `runTurn` / `streamTurn` produced. */
export interface TurnResult {
  /** Items this turn added to the history (input, model items, outputs, injections). */
  readonly items: readonly ResponseItem[];
  /** Text of the model's last assistant message, if any. */
  readonly finalText?: string;
  /** Sampling steps the turn took. */
  readonly steps: number;
  /** Set when a UserPromptSubmit hook refused the input (the reason): nothing was sent or recorded. */
  readonly promptBlocked?: string;
}

/** Events of the turn loop itself, beside the protocol's tool, cell and plan events. */
export type SessionLoopEvent =
  | { type: 'turn-start'; turnId: string }
  /**
   * The turn ended: `result` when it succeeded (what `runTurn` returns), `error` when it failed —
   * the `SwitchyardError` `runTurn` / `streamTurn` reject with, or for a turn of `beginTurn()`
   * the reason it was aborted with.
   */
  | { type: 'turn-end'; turnId: string; result?: TurnResult; error?: unknown }
  | { type: 'step-start'; turnId: string; stepIndex: number; plan: ToolPlan }
  /**
   * One sampling attempt starts; `model` is the requested model's name when known (`model.name` or
   * the client's `capabilities.name`), `provider` who serves it (the client's `provider`).
   */
  | { type: 'model-request'; turnId: string; stepIndex: number; attempt: number; plan: ToolPlan; request: ModelRequest; model?: string; provider?: ModelProviderInfo }
  /**
   * The attempt's stream ended: with `usage` / `responseId` / `responseModel` (the model that
   * answered) / `finishReasons` as the model reported them, or with the `error` it threw.
   */
  | {
      type: 'model-response';
      turnId: string;
      stepIndex: number;
      attempt: number;
      usage?: ModelUsage;
      responseId?: string;
      responseModel?: string;
      finishReasons?: readonly string[];
      error?: unknown;
    }
  /** More assistant text as the model streams it (before the message's `model-item`). */
  | { type: 'text-delta'; turnId: string; delta: string }
  | { type: 'model-item'; turnId: string; item: ResponseItem }
  /** A retryable model error; the same step is sampled again after `delayMs`. Discard text shown since the last `model-request`. */
  | { type: 'model-retry'; turnId: string; stepIndex: number; attempt: number; delayMs: number; error: SwitchyardError }
  | { type: 'tool-output'; turnId: string; item: ToolOutputItem }
  | BackgroundCompleteEvent
  | SessionWarningEvent;

/** Everything a session emits. */
export type SessionEvent = SwitchyardEvent | SessionLoopEvent;
export type SessionEventType = SessionEvent['type'];
export type SessionEventListener<T extends SessionEventType> = (event: Extract<SessionEvent, { type: T }>) => void;
/** What `session.streamTurn()` yields: every event of the turn, ending with `turn-end`. */
export type TurnEvent = SessionEvent;
