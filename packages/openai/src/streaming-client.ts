import { SwitchyardError, type ModelCapabilities, type ModelClient, type ModelProviderInfo, type ModelRequest, type ModelStreamEvent, type ModelUsage } from '@switchyard/protocol';
import { postForStream, streamWithRetries, type RetryOptions } from './retry';
import { StreamGuard, type StreamLimitOptions } from './stream-limits';

/** What both HTTP clients share. */
export interface StreamingClientOptions extends RetryOptions, StreamLimitOptions {
  model: string;
  apiKey?: string;
  parallelToolCalls?: boolean;
  contextWindow?: number;
  providerName?: string;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

/**
 * `gen_ai.provider.name` by API host, as the OpenTelemetry GenAI conventions name these providers;
 * any other host (a local server, a proxy) speaks OpenAI's API and is reported as `openai`.
 */
const PROVIDER_BY_HOST: ReadonlyArray<readonly [RegExp, string]> = [
  [/(^|\.)openai\.azure\.com$/, 'azure.ai.openai'],
  [/(^|\.)deepseek\.com$/, 'deepseek'],
  [/(^|\.)groq\.com$/, 'groq'],
  [/(^|\.)x\.ai$/, 'x_ai'],
  [/(^|\.)mistral\.ai$/, 'mistral_ai'],
  [/(^|\.)perplexity\.ai$/, 'perplexity'],
  [/^generativelanguage\.googleapis\.com$/, 'gcp.gemini'],
];

/** Who serves `url`, for telemetry: the provider (the host's `providerName`, else by host), host and port; requests always stream. */
export function providerInfo(url: string, providerName?: string): ModelProviderInfo {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = parsed.port !== '' ? Number(parsed.port) : parsed.protocol === 'http:' ? 80 : 443;
  const name = providerName || (PROVIDER_BY_HOST.find(([pattern]) => pattern.test(host.toLowerCase()))?.[1] ?? 'openai');
  return { name, serverAddress: host, serverPort: port, streaming: true };
}

/** One prepared request: its JSON body, and how to parse one response stream of it. */
export interface PreparedRequest {
  body: string;
  /** Parses one response stream; `guard` counts what it holds (see {@link StreamGuard.grow}). */
  parse(stream: ReadableStream<Uint8Array>, guard: StreamGuard): AsyncIterable<ModelStreamEvent>;
}

/**
 * Builds a {@link ModelClient} that POSTs each prepared body to `url` and parses the event
 * stream, retrying with the same body (see `streamWithRetries`). Each attempt runs under a
 * {@link StreamGuard}: a timeout aborts the fetch and the body read with the bound's error.
 */
export function createStreamingClient(
  factory: string,
  options: StreamingClientOptions,
  url: string,
  prepare: (request: ModelRequest) => PreparedRequest,
): ModelClient {
  if (typeof options?.model !== 'string' || options.model === '') {
    throw new SwitchyardError('CONFIG', `${factory}: \`model\` must be a non-empty string`);
  }
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const capabilities: ModelCapabilities = {
    name: options.model,
    parallelToolCalls: options.parallelToolCalls ?? true,
    contextWindow: options.contextWindow,
  };
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  return {
    capabilities,
    provider: providerInfo(url, options.providerName),
    stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
      const prepared = prepare(request);
      return streamWithRetries(
        async function* attempt() {
          const guard = new StreamGuard(options, request.signal);
          try {
            const body = await postForStream(fetchImpl, url, headers, prepared.body, guard.signal, guard.limits.maxErrorBodyBytes);
            yield* prepared.parse(body, guard);
          } catch (error) {
            // A timeout aborts the fetch or the read; what it rejects with is the bound's error.
            throw request.signal.aborted ? error : (guard.failure ?? error);
          } finally {
            guard.dispose();
          }
        },
        request.signal,
        options,
      );
    },
  };
}

/** `{baseURL}/{path}` without doubled slashes. */
export function endpoint(baseURL: string, path: string): string {
  return `${baseURL.replace(/\/+$/, '')}/${path}`;
}

/** Where one API's usage object keeps its counts: `input_tokens` or `prompt_tokens`, and so on. */
interface UsageFields {
  input: string;
  output: string;
  /** The `*_tokens_details` objects carrying `cached_tokens` and `reasoning_tokens`. */
  inputDetails: string;
  outputDetails: string;
}

/**
 * The usage both APIs report, read by their field names. The total falls back to input + output;
 * a detail the server did not report (cache reads, reasoning tokens) stays absent, never 0.
 */
export function readTokenUsage(usage: Record<string, unknown>, fields: UsageFields): ModelUsage {
  const count = (value: unknown) => (typeof value === 'number' ? value : 0);
  const detail = (details: unknown, key: string) => {
    const value = typeof details === 'object' && details !== null ? (details as Record<string, unknown>)[key] : undefined;
    return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
  };
  const inputTokens = count(usage[fields.input]);
  const outputTokens = count(usage[fields.output]);
  const cacheReadInputTokens = detail(usage[fields.inputDetails], 'cached_tokens');
  const reasoningOutputTokens = detail(usage[fields.outputDetails], 'reasoning_tokens');
  return {
    inputTokens,
    outputTokens,
    totalTokens: typeof usage.total_tokens === 'number' ? usage.total_tokens : inputTokens + outputTokens,
    ...(cacheReadInputTokens === undefined ? {} : { cacheReadInputTokens }),
    ...(reasoningOutputTokens === undefined ? {} : { reasoningOutputTokens }),
  };
}
