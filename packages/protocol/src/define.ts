import type { ToolInvocation } from './call';
import { parseObjectArguments } from './arguments';
import { RespondToModelError, isSwitchyardError, errorMessage } from './errors';
import type { HookPayloadAdapter, ToolExecutor, ToolExposure } from './executor';
import type { JsonObject, JsonSchema, JsonValue } from './json';
import { FunctionToolOutput, JsonToolOutput, isToolOutput, type ToolOutput } from './output';
import { displayName, toolName } from './tool-name';
import type { ToolGrammar } from './tool-spec';

/** What a handler may return: a string (output text), a JSON value (JSON text / typed Code Mode value) or a {@link ToolOutput}. */
export type ToolHandlerResult = string | JsonValue | ToolOutput;

/** Options of {@link defineFunctionTool}. */
export interface DefineFunctionToolOptions<Args extends JsonObject = JsonObject> {
  /** Function name (`get_weather`). */
  name: string;
  /** Namespace with its own separator (`weather__`, `mcp__docs__`) or a plain group (`clock`). */
  namespace?: string;
  /** Description of the namespace (first non-blank wins when several tools share it). */
  namespaceDescription?: string;
  /** What the model reads to decide when to call the tool (the spec's `description`). */
  description: string;
  /** JSON Schema of the arguments; the registry validates calls against it before `handle`. */
  parameters: JsonSchema;
  /** JSON Schema of the Code Mode result (documentation only; never sent to the model). */
  outputSchema?: JsonSchema;
  /** Responses-API strict mode, sent as `strict`; `false` when omitted. */
  strict?: boolean;
  /** Where the tool appears ({@link ToolExposure}). Default `direct`. */
  exposure?: ToolExposure;
  /** May run concurrently with other parallel-safe calls. Default false (runs exclusively). */
  supportsParallelToolCalls?: boolean;
  /** On cancellation, the runtime awaits the handler's teardown instead of abandoning it. Default false. */
  waitsForCancellation?: boolean;
  /** Hook adapter, or `false` to never run hooks. Default: `{tool_name, tool_input}` hooks. */
  hookPayload?: HookPayloadAdapter | false;
  /** Extra words for the `tool_search` index (used for deferred tools only). */
  searchText?: string;
  /** Runs the call with parsed arguments (`{}` for blank arguments). */
  handle(context: { args: Args; signal: AbortSignal; invocation: ToolInvocation }): Promise<ToolHandlerResult> | ToolHandlerResult;
}

/** Options of {@link defineFreeformTool}. */
export interface DefineFreeformToolOptions {
  /** Tool name the model calls with raw text (`apply_patch`). */
  name: string;
  /** Namespace with its own separator (`weather__`) or a plain group (`clock`); absent for a plain tool. */
  namespace?: string;
  /** Description of the namespace (first non-blank wins when several tools share it). */
  namespaceDescription?: string;
  /** What the model reads to decide when to call the tool (the spec's `description`). */
  description: string;
  /** Lark or regex grammar for the input; absent means free text. */
  grammar?: ToolGrammar;
  /** Where the tool appears ({@link ToolExposure}). Default `direct`. */
  exposure?: ToolExposure;
  /** May run concurrently with other parallel-safe calls. Default false (runs exclusively). */
  supportsParallelToolCalls?: boolean;
  /** Hooks for a freeform tool are opt-in: supply an adapter. */
  hookPayload?: HookPayloadAdapter | false;
  /** Extra words for the `tool_search` index (used for deferred tools only). */
  searchText?: string;
  /**
   * Runs the call with the raw input text. An ordinary throw becomes a model-visible failure ("tool X failed:
   * …"), a `FatalToolError` ends the turn; must honour `signal`.
   */
  handle(context: { input: string; signal: AbortSignal; invocation: ToolInvocation }): Promise<ToolHandlerResult> | ToolHandlerResult;
}

/**
 * Turns a handler's return value into a {@link ToolOutput}: a `ToolOutput` as is, a string as
 * output text, any other JSON value as a {@link JsonToolOutput}. Throws a `RespondToModelError`
 * if the value cannot be serialized (circular, BigInt, undefined).
 */
export function toToolOutput(result: unknown): ToolOutput {
  if (isToolOutput(result)) return result;
  if (typeof result === 'string') return new FunctionToolOutput(result, true);
  if (result === undefined) return new JsonToolOutput(null);
  try {
    return new JsonToolOutput(result as JsonValue);
  } catch (error) {
    throw new RespondToModelError(`tool result is not JSON-serializable: ${errorMessage(error)}`, { cause: error });
  }
}

/** Runs a handler body and normalizes result and errors (ordinary throws → model-visible failure naming the tool). */
async function runHandler(display: string, body: () => Promise<ToolHandlerResult> | ToolHandlerResult): Promise<ToolOutput> {
  try {
    return toToolOutput(await body());
  } catch (error) {
    if (isSwitchyardError(error)) throw error;
    throw new RespondToModelError(`tool ${display} failed: ${errorMessage(error)}`, { cause: error });
  }
}

/**
 * Defines a function tool as a plain {@link ToolExecutor} — all a plugin author needs, with
 * `@switchyard/protocol` as the only dependency. The handler gets parsed arguments; it returns a
 * string, a JSON value or a `ToolOutput`; an ordinary throw becomes a model-visible failure
 * ("tool X failed: …"), a `FatalToolError` ends the turn.
 */
export function defineFunctionTool<Args extends JsonObject = JsonObject>(options: DefineFunctionToolOptions<Args>): ToolExecutor {
  const name = toolName(options.name, options.namespace);
  const display = displayName(name);
  return {
    name,
    spec: {
      type: 'function',
      name: options.name,
      description: options.description,
      ...(options.strict !== undefined ? { strict: options.strict } : {}),
      parameters: options.parameters,
      ...(options.outputSchema ? { outputSchema: options.outputSchema } : {}),
    },
    exposure: options.exposure,
    supportsParallelToolCalls: options.supportsParallelToolCalls ?? false,
    waitsForCancellation: options.waitsForCancellation,
    namespaceDescription: options.namespaceDescription,
    searchText: options.searchText,
    hookPayload: options.hookPayload,
    handle(invocation) {
      return runHandler(display, () => {
        const payload = invocation.payload;
        if (payload.kind !== 'function') throw new RespondToModelError(`${options.name} handler received unsupported payload`);
        const args = parseObjectArguments(payload.arguments) as Args;
        return options.handle({ args, signal: invocation.signal, invocation });
      });
    },
  };
}

/**
 * Defines a freeform (custom) tool as a plain {@link ToolExecutor}. The handler receives the raw
 * input text; results and errors are normalized as in {@link defineFunctionTool}.
 */
export function defineFreeformTool(options: DefineFreeformToolOptions): ToolExecutor {
  const name = toolName(options.name, options.namespace);
  return {
    name,
    spec: {
      type: 'custom',
      name: options.name,
      description: options.description,
      ...(options.grammar ? { grammar: options.grammar } : {}),
    },
    exposure: options.exposure,
    supportsParallelToolCalls: options.supportsParallelToolCalls ?? false,
    namespaceDescription: options.namespaceDescription,
    searchText: options.searchText,
    hookPayload: options.hookPayload,
    handle(invocation) {
      return runHandler(displayName(name), () => {
        const payload = invocation.payload;
        if (payload.kind !== 'custom') throw new RespondToModelError(`${options.name} handler received unsupported payload`);
        return options.handle({ input: payload.input, signal: invocation.signal, invocation });
      });
    },
  };
}
