import {
  RespondToModelError,
  cellIdOf,
  errorMessage,
  hasErrorCode,
  isJsonObject,
  isSwitchyardError,
  toolName,
  type BackgroundDelivery,
  type CellObservation,
  type ContentItem,
  type CodeModeSurface,
  type JsonObject,
  type ToolExecutor,
  type ToolInvocation,
} from '@switchyard/protocol';
import { FunctionToolOutput } from '@switchyard/kit';
import { contentItemTokens, parseFunctionArguments } from '@switchyard/kit/internal';
import type { CodeModeService } from './code-mode-service';
import { outputBudget, type OutputBudget } from './dispatch-broker';
import { EXEC_GRAMMAR, WAIT_DESCRIPTION, WAIT_PARAMETERS, augmentedDescription, execDescription, toolDeclaration } from './description';
import { parseExecSource } from './pragma';
import { formatObservation } from './response';
import type { FinalObservation } from './background-watch';
import type { BrokerSession } from './code-mode-service';

/** Budgets and switches shared by `exec` and `wait`. */
export interface CodeModeToolOptions {
  /** Default yield time of `exec` and `wait` (ms). Default 10 000. */
  defaultYieldTimeMs: number;
  /** Default token budget of `exec` and `wait`. Default 10 000. */
  defaultMaxOutputTokens: number;
  /** Host cap clamping every budget (pragma `max_output_tokens`, `wait.max_tokens`). */
  maxOutputTokensCap?: number;
  /** Host cap clamping every yield time (pragma `yield_time_ms`, `wait.yield_time_ms`, the default). */
  maxYieldTimeMs?: number;
  /** Fire PreToolUse / PostToolUse hooks for the outer `exec` (`tool_input: { code }`). */
  execHooks: boolean;
  /** The step delivers background completions: `exec`'s description says polling is unnecessary. */
  background?: boolean;
}

/** What `exec`'s description adds when the host delivers background completions. */
export const BACKGROUND_NOTE =
  'A cell still running when `exec` returns keeps running in the background: its final output is delivered to you on its own once it finishes (completed, failed or terminated), as another output of the same `exec` call. You do not need to poll it with `wait`; use `wait` only to see intermediate output or to terminate the cell.';

function budget(requested: number | undefined, options: Pick<CodeModeToolOptions, 'defaultMaxOutputTokens' | 'maxOutputTokensCap'>): number {
  const value = requested ?? options.defaultMaxOutputTokens;
  return options.maxOutputTokensCap === undefined ? value : Math.min(value, options.maxOutputTokensCap);
}

/**
 * The yield time of an `exec` or `wait`: the requested one or the default, clamped by the host's
 * `maxYieldTimeMs` (Codex's per-session `max_yield_time_ms` limit), so no call holds a step longer.
 */
function yieldTime(requested: number | undefined, options: CodeModeToolOptions): number {
  const value = requested ?? options.defaultYieldTimeMs;
  return options.maxYieldTimeMs === undefined ? value : Math.min(value, options.maxYieldTimeMs);
}

/** `cell-end` for an observation that ends its cell (completed, failed or terminated). */
function reportEnd(service: CodeModeService, observation: CellObservation): void {
  if (observation.kind === 'yielded') return;
  if (observation.kind === 'completed' && observation.error !== undefined) {
    service.emitCellEvent({ type: 'cell-end', cellId: observation.cellId, status: 'failed', error: observation.error });
    return;
  }
  service.emitCellEvent({ type: 'cell-end', cellId: observation.cellId, status: observation.kind });
}

/**
 * The call's response, within what its budget has left after the cell's notify() items; what the
 * response takes is spent too, so notify() items of a cell still running after it take the rest.
 */
function respond(observation: CellObservation, started: number, budget: OutputBudget, invocation: ToolInvocation): FunctionToolOutput {
  const formatted = formatObservation(observation, {
    maxTokens: budget.remaining,
    wallTimeMs: Date.now() - started,
    originalImageDetail: invocation.step.provider.originalImageDetail,
  });
  const spent = formatted.items.slice(1).reduce((sum, item) => sum + contentItemTokens(item), 0);
  budget.remaining = Math.max(0, budget.remaining - spent);
  return new FunctionToolOutput(formatted.items, formatted.success);
}

/** The status a background completion reports. */
function completionStatus(observation: FinalObservation): 'completed' | 'failed' | 'terminated' {
  if (observation.kind === 'terminated') return 'terminated';
  return observation.error === undefined ? 'completed' : 'failed';
}

/**
 * After an observation that left the cell running, and when the step delivers background
 * completions: watch the cell, and deliver its end as another `custom_tool_call_output` of the
 * `exec` call that created it (the shape `notify()` uses), under a fresh default output budget.
 */
function watchInBackground(
  service: CodeModeService,
  session: BrokerSession,
  observation: CellObservation,
  invocation: ToolInvocation,
  options: CodeModeToolOptions,
  carried: readonly ContentItem[] = [],
): void {
  const background = invocation.step.background;
  if (observation.kind !== 'yielded' || !background) return;
  watchCell(service, session, observation.cellId, { background, originalImageDetail: invocation.step.provider.originalImageDetail }, options, carried);
}

/**
 * Watches a running cell and delivers its end as another `custom_tool_call_output` of the `exec`
 * call that created it (a cell left running by `exec` / `wait`, or a cell restored from a store).
 */
export function watchCell(
  service: CodeModeService,
  session: BrokerSession,
  cellId: string,
  delivery: { background: BackgroundDelivery; originalImageDetail?: boolean },
  options: Pick<CodeModeToolOptions, 'defaultMaxOutputTokens' | 'maxOutputTokensCap'>,
  carried: readonly ContentItem[] = [],
): void {
  const { background, originalImageDetail } = delivery;
  const execCallId = session.broker.execCallId(cellId);
  if (execCallId === undefined) return;
  const started = Date.now();
  session.watcher.watch(cellId, background, (final) => {
    const items = final.unobservedLimitMs === undefined ? final.items : [...final.items, { type: 'input_text' as const, text: unobservedLimitMessage(final.unobservedLimitMs) }];
    reportEnd(service, final);
    const formatted = formatObservation({ ...final, items }, { maxTokens: budget(undefined, options), wallTimeMs: Date.now() - started, originalImageDetail });
    const item = new FunctionToolOutput(formatted.items, formatted.success).toResponseItem(execCallId, { kind: 'custom', input: '' });
    background.complete({ callId: execCallId, cellId: final.cellId, status: completionStatus(final), item });
  }, carried);
}

/** The note closing the output of a cell stopped for running unobserved too long. */
export function unobservedLimitMessage(limitMs: number): string {
  return `[exec cell terminated: it ran ${limitMs} ms in the background without anyone observing it (the host's limit)]`;
}

/** Service-level failures are plain error texts with no header. */
function serviceFailure(error: unknown): never {
  if (isSwitchyardError(error) && error.fatal) throw error;
  throw new RespondToModelError(errorMessage(error), { cause: error });
}

/**
 * The description with the pragma defaults this Code Mode uses: the template states the reference's
 * (10000 ms, 10000 tokens); a host that sets `defaultYieldTimeMs` (e.g. 30 000, as Codex 0.169.0
 * yields) or `defaultMaxOutputTokens` gets its own numbers in the text the model reads.
 */
function withConfiguredDefaults(description: string, options: CodeModeToolOptions): string {
  const yieldMs = Math.min(options.defaultYieldTimeMs, options.maxYieldTimeMs ?? Number.POSITIVE_INFINITY);
  let text = description;
  if (yieldMs !== 10_000) text = text.replace('exec` to yield early if the script is still running (it answers "Script running with cell ID …"; use `wait` with that cell ID to see more). Defaults to 10000 ms.', `exec\` to yield early if the script is still running (it answers "Script running with cell ID …"; use \`wait\` with that cell ID to see more). Defaults to ${yieldMs} ms.`);
  if (options.defaultMaxOutputTokens !== 10_000) text = text.replace('results. Defaults to 10000 tokens.', `results. Defaults to ${options.defaultMaxOutputTokens} tokens.`);
  return text;
}

/** The `exec` executor for one step's surface. */
export function createExecTool(service: CodeModeService, surface: CodeModeSurface, options: CodeModeToolOptions): ToolExecutor {
  const tools = surface.tools.map((tool) => ({
    name: tool.codeModeName,
    description: augmentedDescription(tool),
    kind: tool.kind,
    declaration: toolDeclaration(tool),
    ...(tool.idempotent ? { idempotent: true } : {}),
  }));
  const description = withConfiguredDefaults(execDescription(surface), options);
  return {
    name: toolName('exec'),
    spec: { type: 'custom', name: 'exec', description: options.background ? `${description}\n\n${BACKGROUND_NOTE}` : description, grammar: { syntax: 'lark', definition: EXEC_GRAMMAR } },
    exposure: 'direct-model-only',
    supportsParallelToolCalls: false,
    hookPayload: options.execHooks
      ? {
          pre: (invocation) => (invocation.payload.kind === 'custom' ? { toolName: 'exec', toolInput: { code: invocation.payload.input } } : undefined),
          post: (invocation, output) =>
            invocation.payload.kind === 'custom'
              ? { input: { toolName: 'exec', toolInput: { code: invocation.payload.input } }, response: output.codeModeResult(invocation.payload) }
              : undefined,
          rewrite: (_invocation, updated) => {
            if (!isJsonObject(updated) || typeof updated.code !== 'string') {
              throw new RespondToModelError('hook returned updatedInput without string field `code`');
            }
            return { kind: 'custom', input: updated.code };
          },
        }
      : false,
    async handle(invocation) {
      if (invocation.payload.kind !== 'custom') throw new RespondToModelError('exec expects raw JavaScript source text');
      const started = Date.now();
      const source = parseExecSource(invocation.payload.input);
      const session = service.session(invocation.step.sessionId, invocation.step.tenant);
      const callBudget = outputBudget(budget(source.maxOutputTokens, options));
      let created: { cellId: string; observation: CellObservation };
      try {
        created = await session.broker.createCell(
          surface.tools,
          invocation.callId,
          (cellId) =>
            session.runtime.createCell({
              cellId,
              source: source.code,
              tools,
              yieldTimeMs: yieldTime(source.yieldTimeMs, options),
              idempotencyKey: callKey(invocation),
              signal: invocation.signal,
            }),
          callBudget,
        );
      } catch (error) {
        // A cancelled exec never tells the model its cell id, so nobody could observe the cell:
        // terminate it rather than leave it running (or holding its result) until session shutdown.
        const orphan = hasErrorCode(error, 'ABORTED') ? cellIdOf(error) : undefined;
        if (typeof orphan === 'string') void session.runtime.terminate(orphan).catch(() => undefined);
        serviceFailure(error);
      }
      reportEnd(service, created.observation);
      const fatal = session.broker.takeFatal();
      if (fatal) throw fatal;
      const response = respond(created.observation, started, callBudget, invocation);
      watchInBackground(service, session, created.observation, invocation, options);
      return response;
    },
  };
}

interface WaitArguments {
  cell_id: string;
  yield_time_ms?: number;
  max_tokens?: number;
  terminate?: boolean;
}

function parseWaitArguments(raw: string): WaitArguments {
  const value = parseFunctionArguments(raw);
  const bad = (message: string): never => {
    throw new RespondToModelError(`failed to parse function arguments: ${message}`, { code: 'INVALID_INPUT' });
  };
  if (!isJsonObject(value)) bad('invalid type: expected struct WaitArguments');
  const args = value as JsonObject;
  for (const key of Object.keys(args)) {
    if (!['cell_id', 'yield_time_ms', 'max_tokens', 'terminate'].includes(key)) {
      bad(`unknown field \`${key}\`, expected one of \`cell_id\`, \`yield_time_ms\`, \`max_tokens\`, \`terminate\``);
    }
  }
  if (typeof args.cell_id !== 'string') bad(args.cell_id === undefined ? 'missing field `cell_id`' : 'invalid type: expected a string for `cell_id`');
  for (const key of ['yield_time_ms', 'max_tokens'] as const) {
    const v = args[key];
    if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isInteger(v) || v < 0)) bad(`invalid value for \`${key}\`: expected a non-negative integer`);
  }
  if (args.terminate !== undefined && args.terminate !== null && typeof args.terminate !== 'boolean') bad('invalid type: expected a boolean for `terminate`');
  return {
    cell_id: args.cell_id as string,
    yield_time_ms: (args.yield_time_ms as number | null) ?? undefined,
    max_tokens: (args.max_tokens as number | null) ?? undefined,
    terminate: (args.terminate as boolean | null) ?? false,
  };
}

/** The `wait` executor: observes, or terminates, a cell by id. No hook payloads; waits for cancellation. */
export function createWaitTool(service: CodeModeService, options: CodeModeToolOptions): ToolExecutor {
  return {
    name: toolName('wait'),
    spec: { type: 'function', name: 'wait', description: WAIT_DESCRIPTION, strict: false, parameters: WAIT_PARAMETERS },
    exposure: 'direct-model-only',
    supportsParallelToolCalls: false,
    waitsForCancellation: true,
    hookPayload: false,
    skipInputValidation: true,
    async handle(invocation) {
      if (invocation.payload.kind !== 'function') throw new RespondToModelError('wait expects JSON arguments');
      const started = Date.now();
      const args = parseWaitArguments(invocation.payload.arguments);
      const callBudget = outputBudget(budget(args.max_tokens, options));
      const session = service.session(invocation.step.sessionId, invocation.step.tenant);
      session.broker.observeWith(args.cell_id, callBudget);
      // the background watch gives the cell up to this call, with what yield_control() handed it
      const carried = await session.watcher.stop(args.cell_id);
      let observation: CellObservation;
      let missing = false;
      try {
        observation = args.terminate
          ? await session.runtime.terminate(args.cell_id)
          : await session.runtime.observe(args.cell_id, {
              yieldTimeMs: yieldTime(args.yield_time_ms, options),
              idempotencyKey: callKey(invocation),
              // a cancelled wait detaches without taking the output: the next wait gets it
              signal: invocation.signal,
            });
      } catch (error) {
        if (hasErrorCode(error, 'CELL_NOT_FOUND')) {
          missing = true;
          observation = { kind: 'completed', cellId: args.cell_id, items: [], error: `exec cell ${args.cell_id} not found`, wallTimeMs: 0 };
        } else {
          // a cancelled or refused wait leaves the cell running: the watch resumes with what it carried
          watchInBackground(service, session, { kind: 'yielded', cellId: args.cell_id, items: [], wallTimeMs: 0 }, invocation, options, carried);
          serviceFailure(error);
        }
      }
      observation = { ...observation, items: [...carried, ...observation.items] };
      // a missing cell has no lifecycle of its own: no cell-end for it
      if (!missing) reportEnd(service, observation);
      const fatal = session.broker.takeFatal();
      if (fatal) throw fatal;
      const response = respond(observation, started, callBudget, invocation);
      watchInBackground(service, session, observation, invocation, options);
      return response;
    },
  };
}

/**
 * The idempotency key of an exec's cell creation or a wait's observation: the model's call id,
 * which names one call, within its turn and sampling step (a model may use the same call id again
 * in a later step or turn; a retry of a call is always in its own step). A runtime answers a retry
 * under the key with the original cell or observation.
 */
function callKey(invocation: { callId: string; step: { turnId: string; stepIndex: number } }): string | undefined {
  const key = `${invocation.step.turnId}/${invocation.step.stepIndex}/${invocation.callId}`;
  // Keys are at most 256 characters; a longer one is not shortened (two calls could then share it).
  return key.length <= 256 ? key : undefined;
}
