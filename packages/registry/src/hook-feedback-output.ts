import type { JsonValue, ToolOutput, ToolOutputItem, ToolPayload } from '@switchyard/protocol';

/**
 * What a call answers when PostToolUse (or PostToolUseFailure) hooks gave feedback: the model reads
 * the feedback text, while Code Mode, post-hook responses and logs keep the original result. After
 * a success `success` is unset; after a failure it stays `false` (a cell's promise still rejects,
 * with the original failure text) and the original's `failureCode` is kept.
 */
export class HookFeedbackOutput implements ToolOutput {
  readonly success: boolean | undefined;
  readonly failureCode: ToolOutput['failureCode'];
  readonly codeModeAlwaysResolves: boolean | undefined;
  readonly feedback: string;
  readonly original: ToolOutput;

  constructor(feedback: string, original: ToolOutput) {
    this.feedback = feedback;
    this.original = original;
    this.success = original.success === false ? false : undefined;
    this.failureCode = original.failureCode;
    this.codeModeAlwaysResolves = original.codeModeAlwaysResolves;
  }

  toResponseItem(callId: string, payload: ToolPayload): ToolOutputItem {
    // A tool_search answer has no text body to replace: the model keeps the original item.
    if (payload.kind === 'tool-search') return this.original.toResponseItem(callId, payload);
    return payload.kind === 'custom'
      ? { type: 'custom_tool_call_output', call_id: callId, output: this.feedback }
      : { type: 'function_call_output', call_id: callId, output: this.feedback };
  }

  codeModeResult(payload: ToolPayload): JsonValue {
    return this.original.codeModeResult(payload);
  }

  logPreview(): string {
    return this.original.logPreview();
  }

  postToolUseResponse(payload: ToolPayload): JsonValue {
    return this.original.postToolUseResponse ? this.original.postToolUseResponse(payload) : this.original.codeModeResult(payload);
  }
}
