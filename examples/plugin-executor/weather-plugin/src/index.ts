/**
 * A third-party executor package: one tool, `weather__get_weather`, written with
 * `defineFunctionTool` of `@switchyard/kit`, with `@switchyard/protocol` (the contract it shares with
 * the host) as a peer.
 */
import type { ToolExecutor } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';

/** One weather reading, as the model (JSON text) and a Code Mode cell (a typed value) receive it. */
export interface WeatherReading {
  city: string;
  tempC: number;
  conditions: string;
}

/** Options of {@link weatherTool}. */
export interface WeatherToolOptions {
  /** Where readings come from; return `undefined` for an unknown city. Default: a small fixed table. */
  read?: (city: string, signal: AbortSignal) => Promise<WeatherReading | undefined> | WeatherReading | undefined;
}

const SAMPLE_READINGS: Record<string, WeatherReading> = {
  oslo: { city: 'Oslo', tempC: -3, conditions: 'light snow' },
  lima: { city: 'Lima', tempC: 19, conditions: 'overcast' },
  pune: { city: 'Pune', tempC: 31, conditions: 'clear' },
};

const readSample = (city: string) => SAMPLE_READINGS[city.trim().toLowerCase()];

/** Creates the `weather__get_weather` tool. An unknown city is a model-visible failure, never a crash. */
export function weatherTool(options: WeatherToolOptions = {}): ToolExecutor {
  const read = options.read ?? readSample;
  return defineFunctionTool<{ city: string }>({
    name: 'get_weather',
    namespace: 'weather__',
    namespaceDescription: 'Weather readings.',
    description: 'Current weather for a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    outputSchema: {
      type: 'object',
      properties: { city: { type: 'string' }, tempC: { type: 'number' }, conditions: { type: 'string' } },
      required: ['city', 'tempC', 'conditions'],
    },
    supportsParallelToolCalls: true,
    async handle({ args, signal }) {
      const reading = await read(args.city, signal);
      if (!reading) throw new Error(`no reading for ${args.city}`);
      return { city: reading.city, tempC: reading.tempC, conditions: reading.conditions };
    },
  });
}

/** The tool with the sample readings: `tools: [weather]`. */
export const weather: ToolExecutor = weatherTool();
