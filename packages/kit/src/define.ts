import {
  type ToolInvocation,
  RespondToModelError,
  SwitchyardError,
  isSwitchyardError,
  errorMessage,
  type HookPayloadAdapter,
  type ToolExecutor,
  type ToolExposure,
  type JsonObject,
  type JsonSchema,
  type JsonValue,
  isToolOutput,
  type ToolOutput,
  displayName,
  isJsonObject,
  toolName,
  type HookToolInput,
  type ToolGrammar,
  VERSION as PROTOCOL_VERSION,
} from '@switchyard/protocol';
import { invocationArguments } from './arguments';
import { checkOptions, optionRules as rule, type OptionsShape } from './options';
import { FunctionToolOutput, JsonToolOutput } from './output';
import { describeStandardIssues, isStandardSchema, type StandardSchema, type ToolArguments, type ToolParameters } from './standard-schema';

/**
 * A value `JSON.stringify` writes as the same JSON value it reads back, but for members that are
 * `undefined`, which it drops (so typed arguments with optional members can be returned as is).
 */
export type JsonSerializable = null | boolean | number | string | readonly JsonSerializable[] | { readonly [key: string]: JsonSerializable | undefined };

/**
 * What a handler may return: a string (output text), a {@link ToolOutput}, or any other
 * JSON value — a value of an `interface` type included, which TypeScript cannot check for
 * JSON-ness, so it is checked when the call returns (see `JsonToolOutput`): a `Map`, a typed array,
 * a class instance, `NaN`, a BigInt or a cycle is a model-visible "tool result is not
 * JSON-serializable: result.path is a Map: …"; a `Date` is its ISO string; `undefined` answers `null`.
 */
export type ToolHandlerResult = string | JsonValue | JsonSerializable | ToolOutput | object | undefined;

/**
 * Whether a call needs approval: a flag, or a function of the call's arguments (a freeform tool's
 * input text). A function that throws counts as needing approval.
 */
export type NeedsApproval<Args> = boolean | ((args: Args, invocation: ToolInvocation) => boolean | Promise<boolean>);

/** Options of {@link defineFunctionTool}. */
export interface DefineFunctionToolOptions<Args = JsonObject, Parameters extends ToolParameters = JsonSchema> {
  /** Function name (`get_weather`). */
  name: string;
  /** Namespace with its own separator (`weather__`, `mcp__docs__`) or a plain group (`clock`). */
  namespace?: string;
  /** Description of the namespace (first non-blank wins when several tools share it). */
  namespaceDescription?: string;
  /** What the model reads to decide when to call the tool (the spec's `description`). */
  description: string;
  /**
   * The arguments: a JSON Schema (the registry validates calls against it before `handle`; written
   * inline or `as const`, it also types `args`) or a Standard Schema value (zod 4, valibot,
   * arktype: `args` is its output type, the handler gets the validated, transformed value, and a
   * failed check is a model-visible "invalid arguments for …").
   */
  parameters: Parameters;
  /**
   * The JSON Schema the model sees when `parameters` is a Standard Schema. Default: the schema's
   * own JSON Schema export (`~standard.jsonSchema`, zod ≥ 4.2, arktype); required for libraries
   * without one (valibot: `toJsonSchema(schema)` from `@valibot/to-json-schema`).
   */
  jsonSchema?: JsonSchema;
  /**
   * Ask the step's `ApprovalProvider` (kind `tool`, with the arguments as `input`) before the
   * handler runs, for direct calls and calls from Code Mode alike. Denied or failed, the model reads
   * "<tool> rejected by user"; without a provider, "<tool> needs approval, and no approval provider
   * is configured" (both code `APPROVAL_DENIED`). Default false.
   */
  needsApproval?: NeedsApproval<Args>;
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
  /**
   * Running the tool twice with the same arguments has the effect of running it once (a read, a
   * put of a value): a Code Mode cell resumed after its agent host restarted runs such a call
   * again when it was in flight, where any other tool's call fails as interrupted. Default false.
   */
  idempotent?: boolean;
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
  /**
   * Hook adapter, or `false` to never run hooks. Default: hooks read `{ tool_name, tool_input: { input } }`
   * (the raw input text), a PostToolUse hook also the output, and an `updatedInput` of `{ input }` replaces the text.
   */
  hookPayload?: HookPayloadAdapter | false;
  /** As for {@link DefineFunctionToolOptions.needsApproval}, with the input text. */
  needsApproval?: NeedsApproval<string>;
  /** Extra words for the `tool_search` index (used for deferred tools only). */
  searchText?: string;
  /**
   * Runs the call with the raw input text. An ordinary throw becomes a model-visible failure ("tool X failed:
   * …"), a `FatalToolError` ends the turn; must honour `signal`.
   */
  handle(context: { input: string; signal: AbortSignal; invocation: ToolInvocation }): Promise<ToolHandlerResult> | ToolHandlerResult;
}

/** How a result that is not JSON begins, for the model and for checks that look for it. */
const NOT_JSON_PREFIX = 'tool result is not JSON-serializable: ';

const EXPOSURES = ['direct', 'direct-model-only', 'deferred', 'hidden'] as const;
const HOOK_PAYLOAD_RULE = rule.anyOf(rule.object(), rule.oneOf(false));
/** `handle` must be a function: a common slip is `handler` (caught as an unknown option) or an object. */
const HANDLE_RULE = rule.required(rule.function());

/** What `defineFunctionTool` accepts; anything else is a `CONFIG` error naming it. */
const FUNCTION_TOOL_RULES: OptionsShape<DefineFunctionToolOptions<unknown, ToolParameters>> = {
  name: rule.required(rule.string()),
  namespace: rule.string(),
  namespaceDescription: rule.string(),
  description: rule.string(),
  // a JSON Schema object or a Standard Schema value (arktype's are functions)
  parameters: rule.required(rule.anyOf(rule.object(), rule.function())),
  jsonSchema: rule.object(),
  needsApproval: rule.anyOf(rule.boolean(), rule.function()),
  outputSchema: rule.object(),
  strict: rule.boolean(),
  exposure: rule.oneOf(...EXPOSURES),
  supportsParallelToolCalls: rule.boolean(),
  waitsForCancellation: rule.boolean(),
  idempotent: rule.boolean(),
  hookPayload: HOOK_PAYLOAD_RULE,
  searchText: rule.string(),
  handle: HANDLE_RULE,
};

/** What `defineFreeformTool` accepts. */
const FREEFORM_TOOL_RULES: OptionsShape<DefineFreeformToolOptions> = {
  name: rule.required(rule.string()),
  namespace: rule.string(),
  namespaceDescription: rule.string(),
  description: rule.string(),
  grammar: rule.object(),
  exposure: rule.oneOf(...EXPOSURES),
  supportsParallelToolCalls: rule.boolean(),
  hookPayload: HOOK_PAYLOAD_RULE,
  needsApproval: rule.anyOf(rule.boolean(), rule.function()),
  searchText: rule.string(),
  handle: HANDLE_RULE,
};

/**
 * The default hook payload of a freeform tool: hooks read `{ input }` (the raw text) under the
 * tool's display name, so a matcher naming the tool always fires; `updatedInput` must be `{ input: string }`.
 */
export function freeformHookPayload(display: string): HookPayloadAdapter {
  const hookInput = (invocation: ToolInvocation): HookToolInput | undefined =>
    invocation.payload.kind === 'custom' ? { toolName: display, toolInput: { input: invocation.payload.input } } : undefined;
  return {
    pre: hookInput,
    post(invocation, output) {
      const input = hookInput(invocation);
      if (!input) return undefined;
      const response = output.postToolUseResponse ? output.postToolUseResponse(invocation.payload) : output.codeModeResult(invocation.payload);
      return { input, response };
    },
    rewrite(_invocation, updatedInput) {
      if (isJsonObject(updatedInput) && typeof updatedInput.input === 'string') return { kind: 'custom', input: updatedInput.input };
      throw new RespondToModelError('hook returned updatedInput without string field `input`');
    },
  };
}

/** The factory name and the tool's name, when it has one, for option errors. */
function where(factory: string, options: unknown): string {
  const name = (options as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? `${factory}(${name})` : factory;
}

/**
 * Turns a handler's return value into a {@link ToolOutput}: a `ToolOutput` as is, a string as
 * output text, any other value as a {@link JsonToolOutput} (`undefined` answers `null`). Throws a
 * `RespondToModelError` for a value that is not JSON (see `JsonToolOutput`): `tool result is not
 * JSON-serializable: result.index is a Map: return a plain object …`.
 */
export function toToolOutput(result: unknown): ToolOutput {
  if (isToolOutput(result)) return result;
  if (typeof result === 'string') return new FunctionToolOutput(result, true);
  try {
    return new JsonToolOutput(result as object);
  } catch (error) {
    throw new RespondToModelError(`${NOT_JSON_PREFIX}${errorMessage(error)}`, { cause: error });
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

/** The refusal of a call that needed approval and did not get it. */
export function approvalRefusal(display: string, reason = 'rejected by user'): RespondToModelError {
  return new RespondToModelError(`${display} ${reason}`, { code: 'APPROVAL_DENIED' });
}

/** Asks the step's approval provider when `needsApproval` says so; throws the refusal otherwise. */
async function requireToolApproval<Args>(display: string, needsApproval: NeedsApproval<Args> | undefined, args: Args, invocation: ToolInvocation): Promise<void> {
  if (needsApproval === undefined || needsApproval === false) return;
  let needed = true;
  if (typeof needsApproval === 'function') {
    try {
      needed = await needsApproval(args, invocation);
    } catch {
      // an undecidable call is asked about, never waved through
      needed = true;
    }
  }
  if (!needed) return;
  const approvals = invocation.step.approvals;
  if (!approvals) throw approvalRefusal(display, 'needs approval, and no approval provider is configured');
  let decision: string;
  try {
    decision = await approvals.requestApproval({ kind: 'tool', toolName: display, callId: invocation.callId, input: args as JsonValue, signal: invocation.signal });
  } catch {
    decision = 'denied';
  }
  invocation.signal.throwIfAborted();
  if (decision !== 'approved' && decision !== 'approved-for-session') throw approvalRefusal(display);
}

/** The JSON Schema the model sees for `parameters`; a Standard Schema without one is a `CONFIG` error. */
function parametersJsonSchema(display: string, parameters: ToolParameters, jsonSchema: JsonSchema | undefined): JsonSchema {
  if (!isStandardSchema(parameters)) return parameters;
  if (jsonSchema) return jsonSchema;
  const standard = parameters['~standard'];
  if (standard.jsonSchema) {
    try {
      const rendered = { ...standard.jsonSchema.input({ target: 'draft-07' }) };
      delete rendered.$schema;
      return rendered as JsonSchema;
    } catch (error) {
      throw new SwitchyardError('CONFIG', `defineFunctionTool(${display}): the ${standard.vendor} schema cannot be rendered as JSON Schema: ${errorMessage(error)}; pass \`jsonSchema\``, { cause: error });
    }
  }
  throw new SwitchyardError(
    'CONFIG',
    `defineFunctionTool(${display}): the ${standard.vendor} schema has no JSON Schema export (~standard.jsonSchema); pass \`jsonSchema\` (the schema the model sees)`,
  );
}

/**
 * Defines a function tool as a plain {@link ToolExecutor} — all a plugin author needs, with
 * `@switchyard/kit` and `@switchyard/protocol` as the only dependencies. `parameters` is a JSON Schema or a Standard
 * Schema (zod 4, valibot, arktype), and `args` is typed from either. The handler returns a
 * string, a JSON value or a `ToolOutput`; an ordinary throw becomes a model-visible failure
 * ("tool X failed: …"), a `FatalToolError` ends the turn. Throws a `CONFIG` error for a Standard
 * Schema without a JSON Schema (pass `jsonSchema`).
 */
export function defineFunctionTool<const Parameters extends ToolParameters>(options: DefineFunctionToolOptions<ToolArguments<Parameters>, Parameters>): ToolExecutor;
/** With the argument type given explicitly: `defineFunctionTool<{ city: string }>({ ... })`. */
export function defineFunctionTool<Args extends JsonObject = JsonObject>(options: DefineFunctionToolOptions<Args>): ToolExecutor;
export function defineFunctionTool(options: DefineFunctionToolOptions<unknown, ToolParameters>): ToolExecutor {
  checkOptions(where('defineFunctionTool', options), options, FUNCTION_TOOL_RULES);
  const name = toolName(options.name, options.namespace);
  const display = displayName(name);
  const standard: StandardSchema | undefined = isStandardSchema(options.parameters) ? options.parameters : undefined;
  const parameters = parametersJsonSchema(display, options.parameters, options.jsonSchema);
  return {
    name,
    spec: {
      type: 'function',
      name: options.name,
      description: options.description,
      ...(options.strict !== undefined ? { strict: options.strict } : {}),
      parameters,
      ...(options.outputSchema ? { outputSchema: options.outputSchema } : {}),
    },
    protocolVersion: PROTOCOL_VERSION,
    exposure: options.exposure,
    supportsParallelToolCalls: options.supportsParallelToolCalls ?? false,
    waitsForCancellation: options.waitsForCancellation,
    ...(options.idempotent ? { idempotent: true } : {}),
    namespaceDescription: options.namespaceDescription,
    searchText: options.searchText,
    hookPayload: options.hookPayload,
    handle(invocation) {
      return runHandler(display, async () => {
        let args: unknown = invocationArguments(invocation, options.name);
        if (standard) {
          const checked = await standard['~standard'].validate(args);
          if (checked.issues) throw new RespondToModelError(`invalid arguments for ${display}: ${describeStandardIssues(checked.issues)}`, { code: 'INVALID_INPUT' });
          args = checked.value;
        }
        await requireToolApproval(display, options.needsApproval, args, invocation);
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
  checkOptions(where('defineFreeformTool', options), options, FREEFORM_TOOL_RULES);
  const name = toolName(options.name, options.namespace);
  return {
    name,
    spec: {
      type: 'custom',
      name: options.name,
      description: options.description,
      ...(options.grammar ? { grammar: options.grammar } : {}),
    },
    protocolVersion: PROTOCOL_VERSION,
    exposure: options.exposure,
    supportsParallelToolCalls: options.supportsParallelToolCalls ?? false,
    namespaceDescription: options.namespaceDescription,
    searchText: options.searchText,
    hookPayload: options.hookPayload ?? freeformHookPayload(displayName(name)),
    handle(invocation) {
      return runHandler(displayName(name), async () => {
        const payload = invocation.payload;
        if (payload.kind !== 'custom') throw new RespondToModelError(`${options.name} handler received unsupported payload`);
        await requireToolApproval(displayName(name), options.needsApproval, payload.input, invocation);
        return options.handle({ input: payload.input, signal: invocation.signal, invocation });
      });
    },
  };
}
