import type { LanguageModelV4FunctionTool } from '@ai-sdk/provider';
import { jsonSchema, tool, type Tool } from '@ai-sdk/provider-utils';
import { SwitchyardError, type ContentItem, type ResponseItem, type ToolOutputBody, type ToolOutputItem, type WireTool } from '@switchyard/protocol';
import { toResultOutput } from './prompt';
import { toAiSdkTools } from './tool-table';

/**
 * The part of a Switchyard session `codeModeTool` drives (a `createSession(...)` value has it):
 * one turn per tool call, one step in it, the call dispatched through that step's router.
 */
export interface CodeModeSessionLike {
  beginTurn(options?: { signal?: AbortSignal }): {
    step(): Promise<{ readonly tools: readonly WireTool[]; dispatch(item: ResponseItem): Promise<ToolOutputItem> }>;
    takeInjected(): ResponseItem[];
    end(): Promise<void>;
  };
}

/** Options of {@link codeModeTool}. */
export interface CodeModeToolOptions {
  /** A session created with `toolMode: 'code-mode'` or `'code-mode-only'`: its tools, hooks and cells. */
  session: CodeModeSessionLike;
}

/** What `exec` and `wait` return to the AI SDK: the Switchyard output body (text or content items). */
export type CodeModeToolResult = ToolOutputBody;

/** The two AI SDK tools of {@link codeModeTool} (a type alias, so it is assignable to `ToolSet`). */
export type CodeModeTools = {
  /** Runs JavaScript in a cell: `{ code }`. */
  exec: Tool<{ code: string }, CodeModeToolResult>;
  /** Observes (or terminates) a running cell: the wait tool's own arguments. */
  wait: Tool<Record<string, unknown>, CodeModeToolResult>;
};

/**
 * Exposes a Switchyard Code Mode session as AI SDK tools for hosts that keep `generateText` /
 * `streamText`: spread the result into `tools`. `exec` takes `{ code }`; `wait` takes the Switchyard
 * wait arguments (`cell_id`, `yield_time_ms`, `max_tokens`, `terminate`). Each call runs as one
 * Switchyard turn of one step, so the call and every nested `await tools.x()` of its cell go through
 * the session's router — validation, PreToolUse / PostToolUse hooks, approvals, cancellation — and
 * a blocked nested call reaches the model as the cell's error text. The descriptions (with the
 * nested tools' declarations) come from the session's plan when this is called. Calls run one at a
 * time, as `exec` is not parallel-safe; the AI SDK's `abortSignal` cancels the turn. Between calls no
 * step is attached, so a yielded cell's nested calls wait for the next `exec` / `wait`. Throws a
 * `CONFIG` error when the session plans no `exec`.
 */
export async function codeModeTool(options: CodeModeToolOptions): Promise<CodeModeTools> {
  const { session } = options;
  const probe = session.beginTurn();
  let planned: readonly WireTool[];
  try {
    planned = (await probe.step()).tools;
  } finally {
    await probe.end();
  }
  const { tools } = toAiSdkTools(planned, 'function');
  const execSpec = tools.find((t): t is LanguageModelV4FunctionTool => t.type === 'function' && t.name === 'exec');
  const waitSpec = tools.find((t): t is LanguageModelV4FunctionTool => t.type === 'function' && t.name === 'wait');
  if (!execSpec || !waitSpec) {
    throw new SwitchyardError('CONFIG', "codeModeTool: the session plans no exec/wait tools; create it with toolMode 'code-mode' or 'code-mode-only'");
  }

  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(task: () => Promise<T>): Promise<T> => {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  };
  const dispatch = (item: ResponseItem, signal: AbortSignal | undefined) =>
    serial(async () => {
      const turn = session.beginTurn(signal ? { signal } : {});
      try {
        const step = await turn.step();
        const output = await step.dispatch(item);
        return withInjected('output' in output ? output.output : JSON.stringify(output), turn.takeInjected());
      } finally {
        await turn.end();
      }
    });

  return {
    exec: tool({
      description: execSpec.description ?? '',
      inputSchema: jsonSchema<{ code: string }>(execSpec.inputSchema),
      execute: ({ code }: { code: string }, { toolCallId, abortSignal }): Promise<CodeModeToolResult> => dispatch({ type: 'custom_tool_call', call_id: toolCallId, name: 'exec', input: code }, abortSignal),
      toModelOutput: ({ output }) => toResultOutput(output),
    }),
    wait: tool({
      description: waitSpec.description ?? '',
      inputSchema: jsonSchema<Record<string, unknown>>(waitSpec.inputSchema),
      execute: (input: Record<string, unknown>, { toolCallId, abortSignal }): Promise<CodeModeToolResult> =>
        dispatch({ type: 'function_call', call_id: toolCallId, name: 'wait', arguments: JSON.stringify(input ?? {}) }, abortSignal),
      toModelOutput: ({ output }) => toResultOutput(output),
    }),
  };
}

/**
 * The call's output followed by what the turn injected meanwhile — `notify()` texts of the cell
 * and hook contexts — since an AI SDK tool call has one result and the host's loop never sees them otherwise.
 */
function withInjected(output: ToolOutputBody, injected: ResponseItem[]): ToolOutputBody {
  const extra: ContentItem[] = [];
  for (const item of injected) {
    const record = item as { type: string; output?: ToolOutputBody; content?: unknown };
    if (record.type === 'custom_tool_call_output' || record.type === 'function_call_output') {
      const body = record.output ?? '';
      extra.push(...(typeof body === 'string' ? [{ type: 'input_text' as const, text: body }] : body));
    } else if (record.type === 'message' && typeof record.content === 'string') {
      extra.push({ type: 'input_text', text: record.content });
    }
  }
  if (!extra.length) return output;
  return [...(typeof output === 'string' ? [{ type: 'input_text' as const, text: output }] : output), ...extra];
}
