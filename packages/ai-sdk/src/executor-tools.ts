import { jsonSchema, tool, type Tool, type ToolSet } from '@ai-sdk/provider-utils';
import { displayName, executorExposure, executorPayloadKinds, isJsonObject, type HookRunner, type JsonValue, type StepContext, type ToolExecutor, type ToolOutputBody, type ToolPayload } from '@switchyard/protocol';
import { checkOptions, optionRules as rule, type OptionsShape } from '@switchyard/kit/internal';
import { createExecutorHost } from '@switchyard/registry';
import { toResultOutput } from './prompt';

/** Options of {@link executorsAsAiSdkTools}. */
export interface ExecutorsAsAiSdkToolsOptions {
  /** Pre/post hooks around every call (a hooks.json policy, for example). Absent: no hooks. */
  hooks?: HookRunner;
  /** The step every call runs in: `cwd`, `approvals`, the clock. */
  step?: Partial<StepContext>;
}

const OPTION_RULES: OptionsShape<ExecutorsAsAiSdkToolsOptions> = { hooks: rule.object(), step: rule.object() };

const FREEFORM_INPUT = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The raw input text of the tool.' } },
  required: ['input'],
  additionalProperties: false,
} as const;

/**
 * Switchyard executors as an AI SDK `ToolSet` (the reverse of `aiSdkTools`), keyed by display name
 * (`sql__query`): `generateText({ tools: executorsAsAiSdkTools([query]) })`. Each call runs through
 * the registry as in a session (validated arguments, hooks, the one result rule, `abortSignal`
 * cancels the handler). `execute` resolves with the typed result (what a Code Mode cell gets); the
 * model reads the same text a Switchyard host would send (`toModelOutput`); a failure throws an
 * Error whose message is that text, which the AI SDK hands to the model as a tool error. A freeform
 * tool takes `{ input }`. Hidden and tool-search executors are left out. Throws a `CONFIG` error
 * for a bad option, a duplicate name or an executor of another protocol line.
 */
export function executorsAsAiSdkTools(executors: readonly ToolExecutor[], options: ExecutorsAsAiSdkToolsOptions = {}): ToolSet {
  checkOptions('executorsAsAiSdkTools', options, OPTION_RULES);
  const servable = executors.filter((executor) => executorExposure(executor) !== 'hidden' && executorPayloadKinds(executor).some((kind) => kind !== 'tool-search'));
  const host = createExecutorHost({ tools: servable, hooks: options.hooks, step: options.step });
  const bodies = new Map<string, ToolOutputBody>();
  const set: Record<string, Tool> = {};
  for (const executor of host.tools) {
    const spec = executor.spec;
    const freeform = spec.type === 'custom';
    const parameters = spec.type === 'function' && isJsonObject(spec.parameters) ? spec.parameters : FREEFORM_INPUT;
    set[displayName(executor.name)] = tool({
      description: spec.description,
      inputSchema: jsonSchema<Record<string, unknown>>(parameters as Parameters<typeof jsonSchema>[0]),
      async execute(input: Record<string, unknown>, { toolCallId, abortSignal }): Promise<JsonValue> {
        const payload: ToolPayload = freeform ? { kind: 'custom', input: String(input?.input ?? '') } : { kind: 'function', arguments: JSON.stringify(input ?? {}) };
        const result = await host.call(executor, payload, { signal: abortSignal, callId: toolCallId });
        const body = (result.item as { output?: ToolOutputBody }).output ?? '';
        if (result.success === false || result.error) throw new Error(typeof body === 'string' ? body : JSON.stringify(body));
        bodies.set(toolCallId, body);
        return result.output.codeModeResult(result.payload);
      },
      toModelOutput({ toolCallId, output }) {
        const body = bodies.get(toolCallId);
        bodies.delete(toolCallId);
        return toResultOutput(body ?? (typeof output === 'string' ? output : JSON.stringify(output)));
      },
    });
  }
  return set;
}
