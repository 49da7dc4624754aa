import { SwitchyardError, type ModelCapabilities, type ModelClient, type ModelRequest, type ModelStreamEvent } from '@switchyard/protocol';
import { postForStream, streamWithRetries, type RetryOptions } from './retry';

/** What both HTTP clients share. */
export interface StreamingClientOptions extends RetryOptions {
  model: string;
  apiKey?: string;
  parallelToolCalls?: boolean;
  contextWindow?: number;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

/** One prepared request: its JSON body, and how to parse one response stream of it. */
export interface PreparedRequest {
  body: string;
  parse(stream: ReadableStream<Uint8Array>): AsyncIterable<ModelStreamEvent>;
}

/**
 * Builds a {@link ModelClient} that POSTs each prepared body to `url` and parses the event
 * stream, retrying with the same body (see `streamWithRetries`).
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
    stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
      const prepared = prepare(request);
      return streamWithRetries(
        async function* attempt() {
          yield* prepared.parse(await postForStream(fetchImpl, url, headers, prepared.body, request.signal));
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
