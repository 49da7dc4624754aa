import { beforeAll, describe, expect, it } from 'vitest';
import {
  displayName,
  executorPayloadKinds,
  isFatalError,
  isJsonObject,
  type JsonSchema,
  type JsonValue,
  type ToolExecutor,
  type ToolInvocation,
  type ToolOutput,
  type ToolPayloadKind,
} from '@switchyard/protocol';
import { createToolHarness, invokeTool, payloadOf, type InvokeToolOptions, type InvokeToolResult, type ToolCallInput } from './invoke-tool';
import { checkAbortResponse, checkEventLoop, checkGeneratedResults, checkParametersSchema, delay, resultText } from './plugin-checks';

/**
 * The checks {@link testExecutor} registers, one per promise of the `ToolExecutor` contract. The
 * ids are what a `skip` entry names.
 */
export const EXECUTOR_CHECKS = {
  spec: 'spec: the same JSON-serializable spec every time it is read',
  'call-id': "handle: the answer carries the call's call_id, as the output item of the call's payload kind",
  'payload-kinds': "payloadKinds: the spec's type decides the accepted kinds (function → function, custom → custom), and the sample is one of them",
  'invalid-input': 'handle: malformed or invalid input is a model-visible failure with its call_id, never a throw',
  'incompatible-payload': 'payloadKinds: a call of a kind the executor does not accept is answered `aborted` (INCOMPATIBLE_PAYLOAD) and the turn goes on',
  abort: 'signal: a cancelled call answers aborted with its call_id and the handler settles (waitsForCancellation: the answer waits for it)',
  hooks: 'hookPayload: hooks see a JSON input (and a JSON response after success), or nothing with hookPayload: false',
  parallel: 'supportsParallelToolCalls: concurrent calls in one step each answer their own call_id, exactly once',
  'abort-response': 'signal (abort response): a call aborted while its handler runs ends promptly, measured on the handler itself (not on how slow the sample is)',
  'event-loop': 'handle (event loop): a call never blocks the event loop longer than maxEventLoopBlockMs (default 500 ms)',
  results: 'results: the sample and inputs generated from the parameters schema (fast-check) get JSON results that match the outputSchema, and never end the turn',
  schema: 'parameters: the handler reads only declared properties, and handles every input the schema admits (no TypeError on a schema-valid input)',
  lifecycle: 'onTurnEnd / dispose: each may run twice without throwing, and a later call still gets an answer',
} as const;

/** The id of one check of {@link testExecutor}. */
export type ExecutorCheck = keyof typeof EXECUTOR_CHECKS;

/** Checks left out of a run, with the reason (it appears in the suite's name). */
export interface ExecutorCheckSkip {
  /** Why these checks do not apply (e.g. "the server answers faster than a cancel can arrive"). */
  readonly reason: string;
  readonly tests: readonly ExecutorCheck[];
}

/** What `additionalTests` receives to write checks of its own. */
export interface ExecutorTestContext {
  /** The executor under test (resolved once, before the first check). */
  readonly executor: () => ToolExecutor;
  /** {@link invokeTool} on it, with the suite's `options`. */
  readonly invoke: (input?: ToolCallInput, options?: InvokeToolOptions) => Promise<InvokeToolResult>;
}

/** Options of {@link testExecutor}. */
export interface TestExecutorOptions {
  /** The executor, or a function making it (called once, when the suite is registered; may be async, and is awaited before the first check). */
  readonly executor: ToolExecutor | (() => ToolExecutor | Promise<ToolExecutor>);
  /**
   * A call that succeeds: the arguments object, a payload, or the text the model would write; or a
   * function making one for each call (a tool whose calls need state, e.g. write_stdin's live process).
   */
  readonly sample: ToolCallInput | (() => ToolCallInput | Promise<ToolCallInput>);
  /** Calls that must be model-visible failures (function tools also get malformed JSON automatically). */
  readonly invalid?: readonly ToolCallInput[];
  /** Checks that do not apply, each with its reason. */
  readonly skip?: readonly ExecutorCheckSkip[];
  /** Registers more tests inside the suite (they run before the lifecycle check, which disposes the executor). */
  readonly additionalTests?: (context: ExecutorTestContext) => void;
  /** The suite's name; default the executor's display name (also of a factory that returns one at once; `executor` for an async one). */
  readonly name?: string;
  /** Options of every call (step overrides, sibling tools). */
  readonly options?: Omit<InvokeToolOptions, 'callId' | 'signal' | 'hooks'>;
  /** How many concurrent calls the parallel check makes; default 4. */
  readonly concurrency?: number;
  /** The timeout of each check in milliseconds; default the runner's (`testTimeout`). */
  readonly timeout?: number;
  /** How many inputs the `results` and `schema` checks generate from the parameters schema; default 30. */
  readonly generatedRuns?: number;
  /**
   * A narrower parameters schema the `results` and `schema` checks generate their inputs from, in
   * place of the tool's own: bound what a tool would wait out or spend (a `maximum` on a duration, a
   * `maxLength`, a `required` default it would otherwise fill with a long one). Each generated input
   * must still pass the tool's own schema (others are dropped), and the reads are still compared
   * with the tool's own declared properties. Default: the tool's parameters schema.
   */
  readonly generatedParameters?: JsonSchema;
  /** The fast-check seed of those inputs (a failure prints the seed it used, to replay it). Default: random. */
  readonly seed?: number;
  /** The longest the `event-loop` check lets one call hold the event loop, in ms; default 500. */
  readonly maxEventLoopBlockMs?: number;
}

/** The output item type that answers each payload kind. */
const OUTPUT_TYPES: Record<ToolPayloadKind, string> = {
  function: 'function_call_output',
  custom: 'custom_tool_call_output',
  'tool-search': 'tool_search_output',
};

/** What every check reads: the resolved executor, the suite's config and its call options. */
interface Suite {
  readonly config: TestExecutorOptions;
  readonly options: Omit<InvokeToolOptions, 'callId' | 'signal' | 'hooks'>;
  readonly executor: () => ToolExecutor;
  /** A fresh sample call (the `sample` option, or what its function makes). */
  readonly sample: () => Promise<ToolCallInput>;
  readonly invoke: (input: ToolCallInput, options?: InvokeToolOptions) => Promise<InvokeToolResult>;
}

/** The check of each promise, in the order they are registered (lifecycle last: it disposes the executor). */
const CHECKS: ReadonlyArray<[ExecutorCheck, (suite: Suite) => Promise<void> | void]> = [
  ['spec', checkSpec],
  ['call-id', checkCallId],
  ['payload-kinds', checkPayloadKinds],
  ['invalid-input', checkInvalidInput],
  ['incompatible-payload', checkIncompatiblePayload],
  ['abort', checkAbort],
  ['abort-response', checkAbortResponse],
  ['event-loop', checkEventLoop],
  ['results', checkGeneratedResults],
  ['schema', checkParametersSchema],
  ['hooks', checkHooks],
  ['parallel', checkParallel],
];

/**
 * Registers a vitest suite proving `executor` keeps the `ToolExecutor` contract, one test per
 * promise (see {@link EXECUTOR_CHECKS}); every call goes through the registry's real dispatch
 * ({@link invokeTool}). Call it at the top level of a test file. Skipped checks are not
 * registered; their ids and reasons are written into the suite's name and printed once.
 */
export function testExecutor(config: TestExecutorOptions): void {
  const skipped = skippedChecks(config.skip ?? []);
  if (config.generatedParameters !== undefined && !isJsonObject(config.generatedParameters)) {
    throw new TypeError('testExecutor: generatedParameters must be a JSON Schema object (a narrower parameters schema to generate inputs from)');
  }
  // A factory that answers at once is called here, so the suite carries its tool's name; an async one is awaited before the first check.
  const made = makeExecutor(config.executor);
  const title = config.name ?? (isPromiseLike(made) ? 'executor' : displayName(made.name));
  const skipNote = [...skipped].map(([check, reason]) => `${check} (${reason})`).join('; ');
  if (skipNote) console.info(`testExecutor ${title}: skipped ${skipNote}`);

  describe(`testExecutor: ${title}${skipNote ? ` — skipped: ${skipNote}` : ''}`, () => {
    let executor: ToolExecutor | undefined;
    beforeAll(async () => {
      executor = await made;
    });
    const current = () => {
      if (!executor) throw new Error('testExecutor: the executor is not ready (its factory failed)');
      return executor;
    };
    const options = config.options ?? {};
    const suite: Suite = {
      config,
      options,
      executor: current,
      sample: async () => (typeof config.sample === 'function' ? config.sample() : config.sample),
      invoke: (input, extra = {}) => invokeTool(current(), input, { ...options, ...extra }),
    };
    const register = (id: ExecutorCheck, check: (suite: Suite) => Promise<void> | void) => {
      if (!skipped.has(id)) it(EXECUTOR_CHECKS[id], () => check(suite), config.timeout);
    };
    for (const [id, check] of CHECKS) register(id, check);
    config.additionalTests?.({ executor: current, invoke: async (input, extra) => suite.invoke(input ?? (await suite.sample()), extra) });
    register('lifecycle', checkLifecycle);
  });
}

/** The `spec` check (its promise is in {@link EXECUTOR_CHECKS}). */
function checkSpec(suite: Suite): void {
  const target = suite.executor();
  const first = jsonText(target.spec, 'spec');
  expect(jsonText(target.spec, 'spec')).toBe(first);
  expect(JSON.parse(first)).toEqual(target.spec);
  expect(typeof target.name.name).toBe('string');
  expect(target.spec.type === 'tool_search' || ('name' in target.spec && target.spec.name === target.name.name)).toBe(true);
}

/** The `call-id` check (its promise is in {@link EXECUTOR_CHECKS}). */
async function checkCallId(suite: Suite): Promise<void> {
  const target = suite.executor();
  const sample = await suite.sample();
  const result = await suite.invoke(sample, { callId: 'conformance-call-id' });
  expect(result.item.call_id).toBe('conformance-call-id');
  expect(result.item.type).toBe(OUTPUT_TYPES[payloadOf(target, sample).kind]);
  expect(result.success, `the sample call failed: ${describeResult(result)}`).not.toBe(false);
}

/** The `payload-kinds` check (its promise is in {@link EXECUTOR_CHECKS}). */
async function checkPayloadKinds(suite: Suite): Promise<void> {
  const target = suite.executor();
  const kinds = executorPayloadKinds(target);
  const own: ToolPayloadKind = target.spec.type === 'custom' ? 'custom' : target.spec.type === 'tool_search' ? 'tool-search' : 'function';
  expect(kinds).toContain(own);
  expect(kinds).toContain(payloadOf(target, await suite.sample()).kind);
}

/** The `invalid-input` check (its promise is in {@link EXECUTOR_CHECKS}). */
async function checkInvalidInput(suite: Suite): Promise<void> {
  const target = suite.executor();
  const inputs: ToolCallInput[] = [...(suite.config.invalid ?? [])];
  if (executorPayloadKinds(target).includes('function') && target.spec.type === 'function') inputs.push({ kind: 'function', arguments: '{"unterminated' });
  expect(inputs.length, 'no invalid input to try: give `invalid`, or skip this check with a reason').toBeGreaterThan(0);
  for (const [index, input] of inputs.entries()) {
    const callId = `conformance-invalid-${index}`;
    const result = await suite.invoke(input, { callId });
    expect(result.item.call_id).toBe(callId);
    expect(result.success, `${JSON.stringify(input)} was accepted: ${describeResult(result)}`).toBe(false);
    expect(resultText(result).length, 'a failure must say what went wrong').toBeGreaterThan(0);
  }
}

/** The `incompatible-payload` check (its promise is in {@link EXECUTOR_CHECKS}). */
async function checkIncompatiblePayload(suite: Suite): Promise<void> {
  const target = suite.executor();
  const kinds = executorPayloadKinds(target);
  const other = kinds.includes('function') ? { kind: 'custom' as const, input: 'x' } : { kind: 'function' as const, arguments: '{}' };
  expect(kinds.includes(other.kind), 'the executor accepts both function and custom payloads: skip this check with that reason').toBe(false);
  const result = await suite.invoke(other);
  expect(result.error?.code, describeResult(result)).toBe('INCOMPATIBLE_PAYLOAD');
  expect((result.item as { output?: unknown }).output, describeResult(result)).toBe('aborted');
  expect(result.success, describeResult(result)).toBeUndefined();
}

/** The `abort` check (its promise is in {@link EXECUTOR_CHECKS}). */
async function checkAbort(suite: Suite): Promise<void> {
  const target = suite.executor();
  // Cancelled before it starts: the handler never runs, the answer is aborted.
  const early = new AbortController();
  early.abort();
  const before = await suite.invoke(await suite.sample(), { callId: 'conformance-abort-before', signal: early.signal });
  expect(before.item.call_id).toBe('conformance-abort-before');
  expect(before.error?.code).toBe('ABORTED');
  expect(before.success).toBeUndefined();

  // Cancelled while the handler runs: aborted (or the real answer, when it finished first), and
  // the handler itself settles once its signal fired.
  const controller = new AbortController();
  let started!: () => void;
  const handlerStarted = new Promise<void>((resolve) => (started = resolve));
  let handlerSettled = false;
  let handlerDone: Promise<unknown> = Promise.resolve();
  const observed: ToolExecutor = Object.create(target, {
    handle: {
      value(invocation: ToolInvocation): Promise<ToolOutput> {
        const running = target.handle(invocation);
        handlerDone = running.then(
          () => (handlerSettled = true),
          () => (handlerSettled = true),
        );
        started();
        return running;
      },
    },
  });
  const harness = createToolHarness(observed, { ...suite.options, signal: controller.signal });
  try {
    const pending = harness.call(await suite.sample(), 'conformance-abort-during');
    await Promise.race([handlerStarted, pending.then(() => undefined, () => undefined)]);
    controller.abort();
    const result = await pending;
    expect(result.item.call_id).toBe('conformance-abort-during');
    if (result.error?.code === 'ABORTED') {
      expect(resultText(result)).toMatch(/aborted by user/);
      if (target.waitsForCancellation) expect(handlerSettled, 'waitsForCancellation: the answer came before the handler settled').toBe(true);
    }
    const settled = await Promise.race([handlerDone.then(() => true), delay(10_000).then(() => false)]);
    expect(settled, 'the handler did not settle within 10 s of its signal aborting').toBe(true);
  } finally {
    harness.dispose();
  }
}

/** The `hooks` check (its promise is in {@link EXECUTOR_CHECKS}). */
async function checkHooks(suite: Suite): Promise<void> {
  const target = suite.executor();
  const sample = await suite.sample();
  const result = await suite.invoke(sample, { callId: 'conformance-hooks' });
  const { pre, post } = result.hookInputs;
  const kind = payloadOf(target, sample).kind;
  // A session may run hooks: the sample must not be refused or withheld because hooks cannot see it.
  expect(result.success, `with hooks the sample failed: ${describeResult(result)}`).not.toBe(false);
  const expectsHooks = target.hookPayload === false ? false : target.hookPayload?.pre ? undefined : kind === 'function';
  if (expectsHooks === false) {
    expect(pre).toEqual([]);
    expect(post).toEqual([]);
    return;
  }
  if (expectsHooks) expect(pre).toHaveLength(1);
  expect(pre.length).toBeLessThanOrEqual(1);
  for (const request of [...pre, ...post]) {
    expect(typeof request.toolName === 'string' && request.toolName !== '').toBe(true);
    expect(request.toolUseId).toBe('conformance-hooks');
    expect(JSON.parse(jsonText(request.toolInput, 'hook toolInput'))).toEqual(request.toolInput);
  }
  expect(post.length).toBeLessThanOrEqual(1);
  for (const request of post) expect(JSON.parse(jsonText(request.toolResponse, 'hook toolResponse'))).toEqual(request.toolResponse);

  // A hook handing the same input back as updatedInput: the call still answers (a rewrite the
  // executor cannot take is a model-visible failure, never a crash).
  if (pre.length === 1) {
    const same = pre[0].toolInput;
    const rewritten = await suite.invoke(await suite.sample(), {
      callId: 'conformance-hooks-rewrite',
      hooks: {
        runPreToolUse: async () => ({ blocked: false, updatedInput: same, additionalContexts: [] }),
        runPostToolUse: async () => ({ additionalContexts: [] }),
      },
    });
    expect(rewritten.item.call_id).toBe('conformance-hooks-rewrite');
  }
}

/** The `parallel` check (its promise is in {@link EXECUTOR_CHECKS}). */
async function checkParallel(suite: Suite): Promise<void> {
  const target = suite.executor();
  const count = suite.config.concurrency ?? 4;
  const harness = createToolHarness(target, suite.options);
  try {
    const ids = Array.from({ length: count }, (_, index) => `conformance-parallel-${index}`);
    const samples = await Promise.all(ids.map(() => suite.sample()));
    const results = await Promise.all(ids.map((id, index) => harness.call(samples[index], id)));
    expect(results.map((result) => result.item.call_id)).toEqual(ids);
    for (const result of results) expect(result.success, describeResult(result)).not.toBe(false);
    const terminal = harness.events.filter((event) => event.type === 'tool-call-end' || event.type === 'tool-call-aborted' || event.type === 'tool-call-blocked');
    expect(terminal.map((event) => (event as { callId: string }).callId).sort()).toEqual([...ids].sort());
  } finally {
    harness.dispose();
  }
}

/** The `lifecycle` check (its promise is in {@link EXECUTOR_CHECKS}). */
async function checkLifecycle(suite: Suite): Promise<void> {
  const target = suite.executor();
  await target.onTurnEnd?.('conformance-turn');
  await target.onTurnEnd?.('conformance-turn');
  await target.dispose?.();
  await target.dispose?.();
  const after = await suite.invoke(await suite.sample(), { callId: 'conformance-after-dispose' }).then(
    (result) => result,
    (error: unknown) => {
      // Ending the turn is an answer too; anything else escaping the registry is a crash.
      expect(isFatalError(error), `a call after dispose threw ${String(error)}`).toBe(true);
      return undefined;
    },
  );
  if (after) expect(after.item.call_id).toBe('conformance-after-dispose');
}

/** The executor, or the factory's answer; a factory that throws becomes a rejection the first check reports. */
function makeExecutor(source: TestExecutorOptions['executor']): ToolExecutor | Promise<ToolExecutor> {
  if (typeof source !== 'function') return source;
  try {
    const made = source();
    if (isPromiseLike(made)) {
      const pending = Promise.resolve(made);
      pending.catch(() => undefined); // reported by the suite's beforeAll
      return pending;
    }
    return made;
  } catch (error) {
    const failed = Promise.reject(error);
    failed.catch(() => undefined);
    return failed;
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function skippedChecks(entries: readonly ExecutorCheckSkip[]): Map<ExecutorCheck, string> {
  const skipped = new Map<ExecutorCheck, string>();
  for (const entry of entries) {
    if (typeof entry?.reason !== 'string' || entry.reason.trim() === '') throw new TypeError('testExecutor: every skip entry needs a reason');
    if (!Array.isArray(entry.tests) || entry.tests.length === 0) throw new TypeError(`testExecutor: skip "${entry.reason}" names no tests`);
    for (const id of entry.tests) {
      if (!(id in EXECUTOR_CHECKS)) throw new TypeError(`testExecutor: unknown check "${String(id)}" in skip; checks are ${Object.keys(EXECUTOR_CHECKS).join(', ')}`);
      skipped.set(id, entry.reason);
    }
  }
  return skipped;
}

/** `value` as JSON text, failing with the path of the first value JSON cannot carry. */
function jsonText(value: unknown, what: string): string {
  const problem = nonJson(value, what);
  if (problem) throw new Error(`${problem} is not JSON`);
  return JSON.stringify(value);
}

function nonJson(value: unknown, path: string): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `${path} (${value})`;
  if (Array.isArray(value)) {
    for (const [index, entry] of value.entries()) {
      const problem = nonJson(entry, `${path}[${index}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (typeof value === 'object') {
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return `${path} (a ${prototype?.constructor?.name ?? 'class'} instance)`;
    for (const [key, entry] of Object.entries(value)) {
      if (entry === undefined) continue;
      const problem = nonJson(entry, `${path}.${key}`);
      if (problem) return problem;
    }
    return undefined;
  }
  return `${path} (${typeof value})`;
}

function describeResult(result: InvokeToolResult): string {
  return `${result.error?.code ?? (result.success === false ? 'failure' : 'answer')}: ${resultText(result).slice(0, 500)}`;
}

