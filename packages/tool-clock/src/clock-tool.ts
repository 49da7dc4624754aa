import { FatalToolError, errorMessage, systemTimeProvider, type JsonSchema, type TimeProvider, type ToolExecutor } from '@switchyard/protocol';
import { FunctionToolOutput, defineFunctionTool } from '@switchyard/kit';

/** Options of {@link clockTool}. */
export interface ClockToolOptions {
  /**
   * Where the time comes from. Default: the step's `time` provider (the session's clock), else
   * the system clock. A throw or rejection ends the turn with "failed to read current time: …".
   */
  timeProvider?: TimeProvider;
}

/** What a Code Mode cell receives from `tools.clock__curr_time()`. */
export interface CurrentTimeResult {
  /** The instant as ISO-8601 in UTC with milliseconds (`2025-01-02T03:04:05.000Z`). */
  iso: string;
  /** The instant as Unix milliseconds. */
  unix_ms: number;
}

/** The namespace description the model reads. */
export const CLOCK_NAMESPACE_DESCRIPTION = 'Tools for reading and waiting on time.';
/** The function description the model reads. */
export const CURR_TIME_DESCRIPTION = 'Return the current time in UTC.';

const NO_PARAMETERS: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };

const CURRENT_TIME_RESULT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    iso: { type: 'string', description: 'The current instant as ISO-8601 in UTC.' },
    unix_ms: { type: 'integer', description: 'The current instant as Unix milliseconds.' },
  },
  required: ['iso', 'unix_ms'],
  additionalProperties: false,
};

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

/** The sentence the model reads: `"It is YYYY-MM-DD HH:MM:SS UTC."` (seconds truncated). */
export function formatCurrentTime(instant: Date): string {
  const date = `${pad(instant.getUTCFullYear(), 4)}-${pad(instant.getUTCMonth() + 1)}-${pad(instant.getUTCDate())}`;
  const time = `${pad(instant.getUTCHours())}:${pad(instant.getUTCMinutes())}:${pad(instant.getUTCSeconds())}`;
  return `It is ${date} ${time} UTC.`;
}

/**
 * Reads `provider` once. Throws a `FatalToolError` ("failed to read current time: …") when the
 * provider throws, rejects or answers something that is not a valid date.
 */
export async function readCurrentTime(provider: TimeProvider): Promise<Date> {
  let instant: unknown;
  try {
    instant = await provider.now();
  } catch (error) {
    throw new FatalToolError(`failed to read current time: ${errorMessage(error)}`, { cause: error });
  }
  if (!(instant instanceof Date) || Number.isNaN(instant.getTime())) {
    throw new FatalToolError(`failed to read current time: time provider returned ${describe(instant)}`);
  }
  return instant;
}

function describe(value: unknown): string {
  if (value instanceof Date) return 'an invalid date';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'a non-date object' : `${typeof value} ${String(value)}`;
}

/**
 * The `clock` / `curr_time` tool: no parameters; the model reads
 * "It is YYYY-MM-DD HH:MM:SS UTC."; Code Mode receives {@link CurrentTimeResult}.
 */
export function clockTool(options: ClockToolOptions = {}): ToolExecutor {
  return defineFunctionTool({
    name: 'curr_time',
    namespace: 'clock',
    namespaceDescription: CLOCK_NAMESPACE_DESCRIPTION,
    description: CURR_TIME_DESCRIPTION,
    parameters: NO_PARAMETERS,
    outputSchema: CURRENT_TIME_RESULT_SCHEMA,
    supportsParallelToolCalls: true,
    async handle({ invocation }) {
      const provider = options.timeProvider ?? invocation.step.time ?? systemTimeProvider;
      const instant = await readCurrentTime(provider);
      const result: CurrentTimeResult = { iso: instant.toISOString(), unix_ms: instant.getTime() };
      return new FunctionToolOutput(formatCurrentTime(instant), true, { ...result });
    },
  });
}
