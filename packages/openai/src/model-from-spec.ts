import { SwitchyardError, type ModelClient } from '@switchyard/protocol';
import { chatCompletions } from './chat-completions';
import { DEFAULT_OPENAI_BASE_URL, openaiResponses } from './openai-responses';
import type { RetryOptions } from './retry';

/** Options of {@link modelFromSpec} passed on to the client it creates. */
export interface ModelFromSpecOptions extends RetryOptions {
  /** System instructions sent with every request. */
  instructions?: string;
  /** Context window in tokens, reported in `capabilities`. */
  contextWindow?: number;
  /** The fetch implementation. Default the global `fetch`. */
  fetch?: typeof fetch;
}

/** The environment variables {@link modelFromSpec} reads. */
export interface ModelEnvironment {
  /** API key for `openai:` specs (required for them). */
  OPENAI_API_KEY?: string;
  /** API root for `openai:` specs. Default `https://api.openai.com/v1`. */
  OPENAI_BASE_URL?: string;
  /** Optional API key for `chat:` specs. */
  SWITCHYARD_CHAT_API_KEY?: string;
  [name: string]: string | undefined;
}

/**
 * Creates a model client from a command-line spec: `openai:<model>` (Responses API, needs
 * `OPENAI_API_KEY`) or `chat:<baseURL>#<model>` (a Chat Completions server, e.g.
 * `chat:http://127.0.0.1:8080/v1#qwen2.5-coder`). Returns `undefined` when the spec needs
 * credentials the environment lacks (the caller falls back to its scripted model); throws a
 * `CONFIG` error for a malformed spec.
 */
export function modelFromSpec(spec: string, env: ModelEnvironment = process.env, options: ModelFromSpecOptions = {}): ModelClient | undefined {
  if (spec.startsWith('openai:')) {
    const model = spec.slice('openai:'.length);
    if (model === '') throw specError(spec, 'the model name is empty');
    if (!env.OPENAI_API_KEY) return undefined;
    return openaiResponses({ ...options, model, apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL || DEFAULT_OPENAI_BASE_URL });
  }
  if (spec.startsWith('chat:')) {
    const rest = spec.slice('chat:'.length);
    const hash = rest.lastIndexOf('#');
    if (hash < 0) throw specError(spec, 'expected "#<model>" after the URL');
    const baseURL = rest.slice(0, hash);
    const model = rest.slice(hash + 1);
    if (model === '') throw specError(spec, 'the model name is empty');
    if (!/^https?:\/\/[^/]/.test(baseURL)) throw specError(spec, `"${baseURL}" is not an http(s) URL`);
    return chatCompletions({ ...options, model, baseURL, apiKey: env.SWITCHYARD_CHAT_API_KEY || undefined });
  }
  throw specError(spec, 'expected "openai:<model>" or "chat:<url>#<model>"');
}

function specError(spec: string, reason: string): SwitchyardError {
  return new SwitchyardError('CONFIG', `invalid model spec "${spec}": ${reason}`);
}
