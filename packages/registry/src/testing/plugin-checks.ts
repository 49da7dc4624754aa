import fc from 'fast-check';
import { expect } from 'vitest';
import { isJsonObject, isSwitchyardError, type JsonObject, type JsonSchema, type JsonValue, type ToolExecutor, type ToolInvocation, type ToolOutput } from '@switchyard/protocol';
import { schemaFailures } from '../input-validation';
import { createToolHarness, type InvokeToolResult, type ToolCallInput } from './invoke-tool';
import { schemaInputs } from './schema-inputs';

/** What the checks below need of a `testExecutor` suite. */
export interface PluginCheckSuite {
  readonly executor: () => ToolExecutor;
  readonly sample: () => Promise<ToolCallInput>;
  readonly options: Parameters<typeof createToolHarness>[1];
  readonly config: { readonly generatedRuns?: number; readonly maxEventLoopBlockMs?: number; readonly seed?: number; readonly generatedParameters?: JsonSchema };
}

/** One call as the checks see it: the answer, what the handler read of its arguments, what it threw. */
interface Observation {
  readonly result: InvokeToolResult;
  readonly reads: ReadonlySet<string>;
  readonly thrown: unknown;
  /** When the handler started (ms, `performance.now()`). */
  readonly startedAt: number;
  /** When the handler settled: it may run on after the registry answered an aborted call. */
  readonly settled: Promise<number>;
  /** Whether the handler was called at all (the registry refuses some calls before it). */
  readonly ran: boolean;
}

/** Keys that any code reading an object may touch; they say nothing about the schema. */
const NEUTRAL_KEYS = new Set(['toJSON', 'then', 'constructor', 'valueOf', 'toString', 'toLocaleString', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable', '__proto__', 'length', 'nodeType', 'asymmetricMatch', '$$typeof']);

/** The arguments object behind a Proxy that records the top-level property names the handler reads. */
function recordingArgs(args: JsonValue | undefined, reads: Set<string>): JsonValue | undefined {
  if (!isJsonObject(args)) return args;
  const record = (key: string | symbol) => {
    if (typeof key === 'string' && !NEUTRAL_KEYS.has(key)) reads.add(key);
  };
  return new Proxy(args, {
    get(target, key, receiver) {
      record(key);
      return Reflect.get(target, key, receiver);
    },
    has(target, key) {
      record(key);
      return Reflect.has(target, key);
    },
    getOwnPropertyDescriptor(target, key) {
      record(key);
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
  });
}

/** Runs one call through the registry with the handler observed (arguments read, error thrown, timing). */
async function observe(suite: PluginCheckSuite, input: ToolCallInput, signal?: AbortSignal, onStart?: () => void): Promise<Observation> {
  const target = suite.executor();
  const reads = new Set<string>();
  let thrown: unknown;
  let startedAt = 0;
  let ran = false;
  let settle!: (at: number) => void;
  const settled = new Promise<number>((resolve) => (settle = resolve));
  const observed: ToolExecutor = Object.create(target, {
    handle: {
      async value(invocation: ToolInvocation): Promise<ToolOutput> {
        startedAt = performance.now();
        ran = true;
        onStart?.();
        try {
          return await target.handle({ ...invocation, args: recordingArgs(invocation.args, reads) });
        } catch (error) {
          // A kit handler's own throw arrives wrapped (`tool x failed: …`) with the original as its cause.
          thrown = error instanceof Error && error.cause instanceof Error ? error.cause : error;
          throw error;
        } finally {
          settle(performance.now());
        }
      },
    },
  });
  const harness = createToolHarness(observed, { ...suite.options, hooks: false, signal });
  try {
    const result = await harness.call(input);
    // A call refused before the handler never settles the handler: nothing to wait for.
    if (!ran) settle(startedAt);
    return { result, reads, thrown, startedAt, settled, ran };
  } finally {
    harness.dispose();
  }
}

/** The parameters JSON Schema of a function tool with declared properties, or `undefined`. */
function objectParameters(executor: ToolExecutor): (JsonSchema & { properties: JsonObject }) | undefined {
  const spec = executor.spec;
  if (spec.type !== 'function' || !isJsonObject(spec.parameters) || !isJsonObject(spec.parameters.properties)) return undefined;
  return spec.parameters as JsonSchema & { properties: JsonObject };
}

/** The text the model reads in a result: its output string, else the output as JSON, else (a tool_search_output carries `tools`) the item as JSON. */
export function resultText(result: InvokeToolResult): string {
  const output = (result.item as { output?: unknown }).output;
  if (typeof output === 'string') return output;
  return output === undefined ? JSON.stringify(result.item) : JSON.stringify(output);
}

const shown = (input: unknown) => {
  const text = JSON.stringify(input);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
};

/**
 * Runs `judge` on the sample and on inputs generated from the parameters schema (fast-check,
 * shrunk to the smallest failing input); fails with the one-line reason of the first problem.
 */
async function overGeneratedInputs(suite: PluginCheckSuite, judge: (observation: Observation, input: unknown) => string | undefined): Promise<void> {
  const sampleProblem = judge(await observe(suite, await suite.sample()), await suite.sample());
  if (sampleProblem) expect.fail(sampleProblem);
  const parameters = objectParameters(suite.executor());
  if (!parameters) return;
  // A suite may generate from a narrower schema (e.g. a `maximum` on a duration the tool would wait
  // out); what it generates must still be an input the tool's own schema admits.
  const narrowed = suite.config.generatedParameters;
  const inputs = narrowed ? schemaInputs(narrowed).filter((value) => schemaFailures(parameters, value) === undefined) : schemaInputs(parameters);
  const details = await fc.check(
    fc.asyncProperty(inputs, async (input) => {
      const problem = judge(await observe(suite, input as JsonObject), input);
      if (problem) throw new Error(problem);
    }),
    { numRuns: suite.config.generatedRuns ?? 30, ...(suite.config.seed !== undefined ? { seed: suite.config.seed } : {}) },
  );
  if (details.failed) {
    const reason = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    expect.fail(`${reason} (fast-check seed ${details.seed}, ${details.numRuns} runs)`);
  }
}

/** The `results` check: generated inputs get JSON results that match the `outputSchema`. */
export async function checkGeneratedResults(suite: PluginCheckSuite): Promise<void> {
  const spec = suite.executor().spec;
  const outputSchema = spec.type === 'function' ? spec.outputSchema : undefined;
  await overGeneratedInputs(suite, ({ result, thrown }, input) => {
    if (isSwitchyardError(thrown) && thrown.code === 'FATAL') return `input ${shown(input)} ended the turn (FatalToolError: ${thrown.message}): a handler throws FatalToolError only when the session cannot go on`;
    const text = resultText(result);
    if (result.success === false && text.startsWith('tool result is not JSON-serializable')) return `input ${shown(input)}: ${text}`;
    if (result.success === false || !outputSchema) return undefined;
    const value = result.output.codeModeResult(result.payload);
    const failures = schemaFailures(outputSchema, value);
    if (!failures) return undefined;
    return `the result of ${shown(input)} does not match outputSchema: ${failures.map((line) => line.replace(/^arguments/, 'result')).join('; ')} (result ${shown(value)}): fix the schema or the result`;
  });
}

/**
 * The `schema` check: the handler reads only properties its parameters schema declares, and
 * every input the schema admits is handled (an answer or a deliberate refusal, never a TypeError).
 */
export async function checkParametersSchema(suite: PluginCheckSuite): Promise<void> {
  const parameters = objectParameters(suite.executor());
  const declared = parameters ? Object.keys(parameters.properties) : [];
  const open = parameters?.additionalProperties !== undefined && parameters.additionalProperties !== false;
  await overGeneratedInputs(suite, ({ reads, thrown, result }, input) => {
    const undeclared = parameters && !open ? [...reads].filter((key) => !declared.includes(key)) : [];
    if (undeclared.length > 0) {
      return `the handler reads ${undeclared.map((key) => `args.${key}`).join(', ')}, which the parameters schema does not declare (it declares ${declared.join(', ') || 'nothing'}): declare it or read the declared name`;
    }
    // A result the one rule refused is the `results` check's finding, not a schema mismatch.
    if (resultText(result).startsWith('tool result is not JSON-serializable')) return undefined;
    if (thrown instanceof TypeError || thrown instanceof RangeError || thrown instanceof ReferenceError) {
      return `the parameters schema admits ${shown(input)}, which the handler does not handle (${thrown.name}: ${thrown.message}): narrow the schema (required, enum, minimum, minLength) or handle the value`;
    }
    return undefined;
  });
}

/**
 * How many times a timing check measures before it fails: a handler that ignores its signal or
 * blocks the event loop does so on every call, while a loaded machine's stall (the process not
 * scheduled for a second) rarely hits three calls in a row. The check fails only when every
 * attempt finds the problem, and reports the smallest figure measured.
 */
const TIMING_ATTEMPTS = 3;

/**
 * The `abort-response` check: a call aborted while its handler runs ends promptly. Measured on the
 * handler itself: an uncancelled sample call is timed, then a second one is aborted a quarter of
 * the way in; a handler that runs on for half the remaining time or more ignores its signal.
 * A handler that finishes in under 300 ms has nothing to cancel and passes.
 */
export async function checkAbortResponse(suite: PluginCheckSuite): Promise<void> {
  let smallest: { ranOn: number; duration: number } | undefined;
  for (let attempt = 0; attempt < TIMING_ATTEMPTS; attempt++) {
    const found = await abortRunOn(suite);
    if (!found) return;
    if (!smallest || found.ranOn < smallest.ranOn) smallest = found;
  }
  expect.fail(
    `the handler ignores its abort signal: it ran on for ${Math.round(smallest!.ranOn)} ms after the signal aborted (an uncancelled call takes ${Math.round(smallest!.duration)} ms): pass \`signal\` to what it awaits (fetch, timers, child processes, worker threads) or check \`signal.aborted\``,
  );
}

/** One measurement of the `abort-response` check: how long the handler ran on after its abort, when that is too long. */
async function abortRunOn(suite: PluginCheckSuite): Promise<{ ranOn: number; duration: number } | undefined> {
  const plain = await observe(suite, await suite.sample());
  if (!plain.ran) expect.fail(`the sample never reached the handler (answer: ${resultText(plain.result)}): give a sample the tool accepts`);
  const duration = (await plain.settled) - plain.startedAt;
  if (duration < 300) return undefined;
  const controller = new AbortController();
  const waitMs = Math.min(duration / 4, 2_000);
  let abortedAt: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const sample = await suite.sample();
  const observation = await observe(suite, sample, controller.signal, () => {
    timer = setTimeout(() => {
      abortedAt = performance.now();
      controller.abort(new Error('conformance: abort-response'));
    }, waitMs);
  });
  // The registry answers an aborted call at once; the handler is what is measured, for at most 10 s.
  const settledAt = await Promise.race([observation.settled, delay(10_000).then(() => performance.now())]);
  clearTimeout(timer);
  // Settled before the abort could fire (a blocking handler): nothing ran after it.
  if (abortedAt === undefined || settledAt < abortedAt) return undefined;
  const ranOn = settledAt - abortedAt;
  return ranOn >= Math.max(100, (duration - waitMs) / 2) ? { ranOn, duration } : undefined;
}

/**
 * The `event-loop` check: the sample call never holds the event loop longer than
 * `maxEventLoopBlockMs` (default 500 ms): a tick is scheduled every 10 ms during the call (the
 * sample is made before, so only the handler is measured), and the longest gap between two ticks
 * is the longest block. It fails only when every one of {@link TIMING_ATTEMPTS} calls blocks.
 */
export async function checkEventLoop(suite: PluginCheckSuite): Promise<void> {
  const limit = suite.config.maxEventLoopBlockMs ?? 500;
  let smallest = Infinity;
  for (let attempt = 0; attempt < TIMING_ATTEMPTS && smallest > limit; attempt++) {
    smallest = Math.min(smallest, await longestBlock(suite, await suite.sample()));
  }
  if (smallest > limit) {
    expect.fail(
      `the handler blocks the event loop: one call held it for ${Math.round(smallest)} ms without yielding (limit ${limit} ms), stalling every other call and cell of the host: move CPU-bound or synchronous I/O work to a worker thread, or await between chunks`,
    );
  }
}

/** The longest the event loop went without a tick during one call of `sample` (ms). */
async function longestBlock(suite: PluginCheckSuite, sample: ToolCallInput): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - 10);
    last = now;
  }, 10);
  try {
    await observe(suite, sample);
    // One more tick, so a block at the very end of the call is measured too.
    await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    clearInterval(timer);
  }
  return longest;
}

/** Resolves after `ms` without holding the process open. */
export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());
