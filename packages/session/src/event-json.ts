import { isSwitchyardError, type JsonObject, type JsonValue, type ModelRequest } from '@switchyard/protocol';
import { checkOptions, optionRules as rule, redactCredentials, type OptionsShape } from '@switchyard/kit/internal';
import type { ToolPlan } from '@switchyard/planner';
import type { SessionEvent, TurnResult } from './session-events';

/** Options of {@link eventToJSON}. */
export interface EventJsonOptions {
  /** Longest string kept whole; a longer one keeps its start and ends with a note of what was cut. Default 2,000. */
  maxStringChars?: number;
  /** Most items kept of an array (the rest become one note). Default 50. */
  maxArrayItems?: number;
  /** Characters of strings and keys in the whole answer; past it the rest of each array and object becomes a note. Default 65,536. */
  maxTotalChars?: number;
}

/** Object depth kept; a deeper value becomes a note. */
const MAX_DEPTH = 12;
const DEFAULTS = { maxStringChars: 2_000, maxArrayItems: 50, maxTotalChars: 65_536 } as const;
const OPTION_RULES: OptionsShape<EventJsonOptions> = {
  maxStringChars: rule.number({ min: 0, integer: true }),
  maxArrayItems: rule.number({ min: 0, integer: true }),
  maxTotalChars: rule.number({ min: 0, integer: true }),
};

/**
 * Keys whose values are credentials wherever they appear (an error's request headers, a tool's
 * notification): the value is replaced by `[redacted]`.
 */
const CREDENTIAL_KEY = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api[-_]?key|access[-_]?token|refresh[-_]?token|id[-_]?token|client[-_]?secret|secret|password|passwd|token|bearer)$/i;

interface Walk {
  readonly options: Required<EventJsonOptions>;
  /** Characters left of `maxTotalChars`. */
  left: number;
}

function cutString(walk: Walk, text: string): string {
  const limit = Math.max(0, Math.min(walk.options.maxStringChars, walk.left));
  const kept = text.length <= limit ? text : `${text.slice(0, limit)}…[${text.length - limit} characters cut]`;
  walk.left -= kept.length;
  return kept;
}

/**
 * An error as `{ name, code?, message }`: never its cause, stack or the request it carried, and
 * credential-looking text of its message (a key echoed by a provider) redacted.
 */
function errorJson(walk: Walk, error: unknown): JsonObject {
  const message = (text: string) => cutString(walk, redactCredentials(text));
  if (isSwitchyardError(error)) return { name: error.name, code: error.code, message: message(error.message) };
  if (error instanceof Error) return { name: error.name, message: message(error.message) };
  return { name: typeof error, message: message(String(error)) };
}

/**
 * Plain JSON data, bounded: strings cut, arrays shortened, depth and the total limited, credential
 * keys redacted. Anything that is not plain data (a function, a signal, a class instance other than
 * an error, a `Map`) becomes a note naming its kind, so nothing is reached through it.
 */
function bounded(walk: Walk, value: unknown, depth: number): JsonValue {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'string') return cutString(walk, value);
  if (typeof value === 'bigint') return value.toString();
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return null;
  if (value instanceof Error) return errorJson(walk, value);
  if (depth >= MAX_DEPTH) return '[nested too deep]';
  if (Array.isArray(value)) return boundedArray(walk, value, depth);
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return `[${(value as object).constructor?.name ?? 'object'}]`;
  return boundedObject(walk, value as Record<string, unknown>, depth);
}

function boundedArray(walk: Walk, value: readonly unknown[], depth: number): JsonValue[] {
  const out: JsonValue[] = [];
  for (const item of value) {
    if (out.length >= walk.options.maxArrayItems || walk.left <= 0) {
      out.push(`[${value.length - out.length} more items omitted]`);
      break;
    }
    out.push(bounded(walk, item, depth + 1));
  }
  return out;
}

function boundedObject(walk: Walk, value: Record<string, unknown>, depth: number): JsonObject {
  const out: JsonObject = {};
  const keys = Object.keys(value).filter((key) => value[key] !== undefined);
  for (const [index, key] of keys.entries()) {
    if (walk.left <= 0) {
      out['…'] = `${keys.length - index} more fields omitted`;
      break;
    }
    walk.left -= key.length;
    out[key] = CREDENTIAL_KEY.test(key) ? '[redacted]' : bounded(walk, value[key], depth + 1);
  }
  return out;
}

/** What a plan says in a forwarded event: the mode, the model's tool names, what was deferred, the warnings. */
function planSummary(plan: ToolPlan): JsonObject {
  return {
    toolMode: plan.toolMode,
    tools: plan.tools.map((tool) => ('name' in tool && typeof tool.name === 'string' ? tool.name : tool.type)),
    deferredByBudget: [...plan.deferredByBudget],
    warnings: plan.warnings.map((warning) => warning.message),
  };
}

/** What a request says in a forwarded event: its size, not its content (the history and the tools are known to the host). */
function requestSummary(request: ModelRequest): JsonObject {
  return {
    inputItems: request.input.length,
    tools: request.tools.length,
    parallelToolCalls: request.parallelToolCalls,
    ...(request.instructions !== undefined ? { instructionsChars: request.instructions.length } : {}),
  };
}

/** A turn's result in a forwarded event: its final text and counts (its items were each their own event). */
function resultSummary(result: TurnResult): JsonObject {
  return {
    steps: result.steps,
    items: result.items.length,
    ...(result.finalText !== undefined ? { finalText: result.finalText } : {}),
    ...(result.promptBlocked !== undefined ? { promptBlocked: result.promptBlocked } : {}),
  };
}

/** The event with its large or live parts replaced by summaries, before the bounded walk. */
function reshaped(event: SessionEvent): Record<string, unknown> {
  switch (event.type) {
    case 'step-start':
      return { ...event, plan: planSummary(event.plan) };
    case 'model-request':
      return { ...event, plan: planSummary(event.plan), request: requestSummary(event.request) };
    case 'turn-end':
      return { ...event, result: event.result ? resultSummary(event.result) : undefined };
    default:
      return { ...event };
  }
}

/**
 * A session event as bounded JSON, for forwarding to a browser or a log: `JSON.stringify` of the
 * answer is safe and small. `step-start` / `model-request` carry a summary of the plan (mode, the
 * model's tool names, deferred tools, warnings) and of the request (counts), not the plan's
 * executors or the whole history; `turn-end` its result's final text and counts; every error is
 * `{ name, code?, message }` (never its cause, stack or headers). Every string is cut at
 * `maxStringChars`, every array at `maxArrayItems`, the whole at about `maxTotalChars` characters;
 * values under credential keys (`authorization`, `cookie`, `api_key`, `token`, `password`,
 * `secret`, …) are `[redacted]`; functions, signals and class instances are never walked. Events
 * of other types (a newer package's) get the same bounded walk. Throws only a `CONFIG` error for
 * an invalid option.
 */
export function eventToJSON(event: SessionEvent, options: EventJsonOptions = {}): JsonObject {
  checkOptions('eventToJSON', options, OPTION_RULES);
  const walk: Walk = { options: { ...DEFAULTS, ...options }, left: options.maxTotalChars ?? DEFAULTS.maxTotalChars };
  try {
    return boundedObject(walk, reshaped(event), 0);
  } catch (error) {
    return { type: String((event as { type?: unknown }).type), error: `the event could not be converted: ${error instanceof Error ? error.message : String(error)}` };
  }
}
