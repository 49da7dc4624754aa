import type { ModelRequest, ModelUsage, ResponseItem, SwitchyardEvent, SwitchyardEventType, ToolOutputItem } from '@switchyard/protocol';
import type { ToolPlan } from '@switchyard/planner';

/** Events of the turn loop itself, beside the protocol's tool, hook and cell events. */
export type SessionLoopEvent =
  | { type: 'turn-start'; turnId: string }
  | { type: 'turn-end'; turnId: string; error?: unknown }
  | { type: 'step-start'; turnId: string; stepIndex: number; plan: ToolPlan }
  /** One sampling attempt starts; `model` is the requested model's name when known (`model.name` or the client's `capabilities.name`). */
  | { type: 'model-request'; turnId: string; stepIndex: number; attempt: number; plan: ToolPlan; request: ModelRequest; model?: string }
  /** The attempt's stream ended: with `usage` / `responseId` as the model reported them, or with the `error` it threw. */
  | { type: 'model-response'; turnId: string; stepIndex: number; attempt: number; usage?: ModelUsage; responseId?: string; error?: unknown }
  | { type: 'model-item'; turnId: string; item: ResponseItem }
  | { type: 'tool-output'; turnId: string; item: ToolOutputItem };

/** Everything a session emits. */
export type SessionEvent = SwitchyardEvent | SessionLoopEvent;
export type SessionEventType = SessionEvent['type'];
export type SessionEventListener<T extends SessionEventType> = (event: Extract<SessionEvent, { type: T }>) => void;
export type { SwitchyardEventType };
