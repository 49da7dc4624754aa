import { asSchema, executeTool, safeValidateTypes, type Tool, type ToolResultOutput, type ToolSet } from '@ai-sdk/provider-utils';
import {
  RespondToModelError,
  SwitchyardError,
  displayName,
  errorMessage,
  toolName,
  type ContentItem,
  type JsonSchema,
  type JsonValue,
  type ToolExecutor,
  type ToolExposure,
  type ToolInvocation,
  type ToolOutput,
} from '@switchyard/protocol';
import { FunctionToolOutput, JsonToolOutput, defineFunctionTool, toToolOutput } from '@switchyard/kit';
import { checkOptions, optionRules as rule, type OptionsShape } from '@switchyard/kit/internal';

/** Options of {@link aiSdkTools}. */
export interface AiSdkToolsOptions {
  /** Namespace for every tool, with its own separator (`weather__`); absent for plain names. */
  namespace?: string;
  /** Description of that namespace. */
  namespaceDescription?: string;
  /** The tools' `context` (AI SDK `contextSchema`), passed to `execute`, `needsApproval` and descriptions. */
  context?: unknown;
  /** Where the tools appear. Default `direct`. */
  exposure?: ToolExposure;
  /**
   * May the tools run concurrently with other parallel-safe calls? Default true, as `generateText`
   * runs a step's tool calls concurrently.
   */
  supportsParallelToolCalls?: boolean;
}

const TOOLS_OPTION_RULES: OptionsShape<AiSdkToolsOptions> = {
  namespace: rule.string(),
  namespaceDescription: rule.string(),
  context: rule.any(),
  exposure: rule.oneOf('direct', 'direct-model-only', 'deferred', 'hidden'),
  supportsParallelToolCalls: rule.boolean(),
};

/** The usual mistakes with the tool set: a forgotten `await`, one tool instead of a set, a list. */
function toolSetProblem(toolSet: unknown): string | undefined {
  if (typeof (toolSet as { then?: unknown } | null)?.then === 'function') return 'got a Promise; did you forget `await`?';
  if (Array.isArray(toolSet)) return 'got an array; pass an object of named tools, e.g. `{ weather: tool({...}) }`';
  if (typeof toolSet !== 'object' || toolSet === null) return `got ${toolSet === null ? 'null' : typeof toolSet}`;
  const single = toolSet as { execute?: unknown; inputSchema?: unknown };
  if (typeof single.execute === 'function' || single.inputSchema !== undefined) return 'got a single tool; pass an object of named tools, e.g. `{ weather: tool({...}) }`';
  return undefined;
}

/** The refusal when a tool needs approval and nobody can be asked. */
export const NO_APPROVER_MESSAGE = 'needs approval, but no approval provider is configured to ask the user';
/** The refusal when the user denied a tool that needs approval. */
export const APPROVAL_DENIED_MESSAGE = 'was rejected by the user';

/**
 * Turns an AI SDK `ToolSet` into Switchyard executors, so `tool({...})` definitions run through the
 * router with hooks, validation and cancellation:
 * - the input schema (zod, standard schema or `jsonSchema`) becomes the function's JSON Schema; the
 *   registry validates against it, then the AI SDK's own validation runs (refinements, transforms);
 * - `needsApproval` (a boolean or a function of the input) asks the step's `ApprovalProvider`
 *   (`kind: "tool"`); no provider or a denial is a model-visible refusal with code `APPROVAL_DENIED`;
 * - the call's `AbortSignal` is the tool's `abortSignal`; a streaming `execute` (async iterable)
 *   answers with its last value; `toModelOutput` shapes what the model reads.
 * Async because a schema's JSON Schema may be a promise. Throws a `CONFIG` error for a provider
 * tool (the provider runs it: pass it to the model, not to Switchyard) or a tool without `execute`.
 */
export async function aiSdkTools(toolSet: ToolSet, options: AiSdkToolsOptions = {}): Promise<ToolExecutor[]> {
  const problem = toolSetProblem(toolSet);
  if (problem) throw new SwitchyardError('CONFIG', `aiSdkTools: the tools must be an AI SDK ToolSet (an object of named tools); ${problem}`);
  checkOptions('aiSdkTools', options, TOOLS_OPTION_RULES);
  const executors: ToolExecutor[] = [];
  for (const [name, tool] of Object.entries(toolSet) as Array<[string, Tool]>) {
    if (tool.type === 'provider') {
      throw new SwitchyardError('CONFIG', `aiSdkTools: tool "${name}" is a provider tool (${tool.id}); the provider runs it, so give it to the model, not to aiSdkTools`);
    }
    if (typeof tool.execute !== 'function') {
      throw new SwitchyardError('CONFIG', `aiSdkTools: tool "${name}" has no execute function`);
    }
    let parameters: JsonSchema;
    let description: string;
    try {
      parameters = (await asSchema(tool.inputSchema).jsonSchema) as JsonSchema;
      description = typeof tool.description === 'function' ? tool.description({ context: options.context as never }) : (tool.description ?? '');
    } catch (error) {
      throw new SwitchyardError('CONFIG', `aiSdkTools: tool "${name}": cannot read its input schema or description: ${errorMessage(error)}`, { cause: error });
    }
    const display = displayName(toolName(name, options.namespace));
    executors.push(
      defineFunctionTool({
        name,
        ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
        ...(options.namespaceDescription !== undefined ? { namespaceDescription: options.namespaceDescription } : {}),
        description,
        parameters,
        ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
        ...(options.exposure !== undefined ? { exposure: options.exposure } : {}),
        supportsParallelToolCalls: options.supportsParallelToolCalls ?? true,
        handle: ({ args, signal, invocation }) => runTool(tool, display, args, signal, invocation, options.context),
      }),
    );
  }
  return executors;
}

async function runTool(tool: Tool, display: string, args: JsonValue, signal: AbortSignal, invocation: ToolInvocation, context: unknown): Promise<ToolOutput> {
  const validated = await safeValidateTypes({ value: args, schema: tool.inputSchema });
  if (!validated.success) {
    throw new RespondToModelError(`invalid arguments for ${display}: ${validated.error.message}`, { code: 'INVALID_INPUT' });
  }
  const input = validated.value;
  const executionOptions = { toolCallId: invocation.callId, messages: [], abortSignal: signal, context: context as never };
  const needsApproval =
    typeof tool.needsApproval === 'function'
      ? await tool.needsApproval(input as never, { toolCallId: invocation.callId, messages: [], context: context as never })
      : tool.needsApproval === true;
  if (needsApproval) await requireApproval(display, invocation, signal);

  let output: unknown;
  for await (const part of executeTool({ tool: tool as never, input: input as never, options: executionOptions })) {
    if (part.type === 'final') output = part.output;
  }
  // Without toModelOutput the AI SDK sends a string as text and anything else as JSON; so do we.
  if (!tool.toModelOutput) return toToolOutput(output);
  return toSwitchyardOutput(await tool.toModelOutput({ toolCallId: invocation.callId, input: input as never, output: output as never }));
}

async function requireApproval(display: string, invocation: ToolInvocation, signal: AbortSignal): Promise<void> {
  const provider = invocation.step.approvals;
  if (!provider) throw new RespondToModelError(`${display} ${NO_APPROVER_MESSAGE}`, { code: 'APPROVAL_DENIED' });
  let decision: string;
  try {
    decision = await provider.requestApproval({ kind: 'tool', toolName: display, callId: invocation.callId, cwd: invocation.step.cwd, signal });
  } catch {
    decision = 'denied';
  }
  if (signal.aborted || (decision !== 'approved' && decision !== 'approved-for-session')) {
    throw new RespondToModelError(`${display} ${APPROVAL_DENIED_MESSAGE}`, { code: 'APPROVAL_DENIED' });
  }
}

/**
 * An AI SDK tool result as a Switchyard output: text as text, JSON as JSON (Code Mode reads the
 * typed value), `error-*` as a failed output, `content` as input_text / input_image items, a denial
 * as a failed output with its reason.
 */
function toSwitchyardOutput(output: ToolResultOutput): ToolOutput {
  switch (output.type) {
    case 'text':
      return new FunctionToolOutput(output.value, true);
    case 'json':
      return new JsonToolOutput(output.value as JsonValue);
    case 'error-text':
      return new FunctionToolOutput(output.value, false);
    case 'error-json':
      return new FunctionToolOutput(JSON.stringify(output.value), false);
    case 'execution-denied':
      return new FunctionToolOutput(output.reason ?? 'execution denied', false);
    case 'content': {
      const items: ContentItem[] = [];
      for (const part of output.value) {
        if (part.type === 'text') items.push({ type: 'input_text', text: part.text });
        else if (part.type === 'file' && part.mediaType.startsWith('image')) {
          const data = part.data;
          if (data.type === 'data') items.push({ type: 'input_image', image_url: `data:${part.mediaType};base64,${typeof data.data === 'string' ? data.data : Buffer.from(new Uint8Array(data.data as ArrayBufferLike)).toString('base64')}` });
          else if (data.type === 'url') items.push({ type: 'input_image', image_url: data.url.toString() });
        }
      }
      return new FunctionToolOutput(items, true);
    }
    default:
      return new JsonToolOutput(null);
  }
}
