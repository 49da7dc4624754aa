import type { ModelRequest, ResponseItem, SwitchyardEvent, SwitchyardEventType, ToolOutputItem } from '@switchyard/protocol';
import type { ToolPlan } from '@switchyard/planner';

/** Events of the turn loop itself, beside the protocol's tool, hook and cell events. */
export type SessionLoopEvent =
  | { type: 'turn-start'; turnId: string }
  | { type: 'turn-end'; turnId: string; error?: unknown }
  | { type: 'step-start'; turnId: string; stepIndex: number; plan: ToolPlan }
  | { type: 'model-request'; turnId: string; stepIndex: number; attempt: number; plan: ToolPlan; request: ModelRequest }
  | { type: 'model-item'; turnId: string; item: ResponseItem }
  | { type: 'tool-output'; turnId: string; item: ToolOutputItem };

/** Everything a session emits. */
export type SessionEvent = SwitchyardEvent | SessionLoopEvent;
export type SessionEventType = SessionEvent['type'];
export type SessionEventListener<T extends SessionEventType> = (event: Extract<SessionEvent, { type: T }>) => void;
export type { SwitchyardEventType };
