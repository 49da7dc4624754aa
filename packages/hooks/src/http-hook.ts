import { request as httpRequest, STATUS_CODES, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { errorMessage } from '@switchyard/protocol';
import { runWithDeadline } from './deadline';
import type { HandlerRunResult } from './hook-output';
import { guardedLookup, isListed, parseHookUrl, redactUrl, urlRefusal } from './http-url-policy';
import { VERSION } from './version';

/** The part of a configured `http` handler the runner reads. */
export interface HttpHookTarget {
  readonly url: URL;
  /** Header values as written: `$NAME` / `${NAME}` are filled from the environment for names in `allowedEnvVars`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly allowedEnvVars: readonly string[];
  readonly timeoutSec: number;
}

/** What every `http` run shares: the allow-list, the response cap, the environment headers may read. */
export interface HttpHookSettings {
  readonly allowed: readonly URL[] | undefined;
  readonly maxOutputBytes: number;
  readonly env: NodeJS.ProcessEnv;
}

/** Redirects followed at most (307 and 308 only: they keep the method and body by definition). */
const MAX_REDIRECTS = 5;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;
/** Headers the runner sets itself. */
const RESERVED_HEADERS = new Set(['content-length', 'host', 'transfer-encoding', 'connection']);

/** A header set in hooks.json that cannot be sent, or `undefined` when every one can (names and values as written). */
export function headerProblem(headers: Readonly<Record<string, string>>): string | undefined {
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) return `has an invalid header name ${JSON.stringify(name)}`;
    if (RESERVED_HEADERS.has(name.toLowerCase())) return `sets the header ${name}, which the hook runner sets itself`;
    if (typeof value !== 'string') return `has a header ${name} whose value is not a string`;
    if (/[\r\n\0]/.test(value)) return `has a header ${name} whose value contains a line break or NUL`;
  }
  return undefined;
}

/** Header values with `$NAME` / `${NAME}` filled in: allowed names from `env`, any other name as the empty string. */
function interpolatedHeaders(target: HttpHookTarget, env: NodeJS.ProcessEnv): Record<string, string> {
  const allowed = new Set(target.allowedEnvVars);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.headers)) {
    headers[name] = value.replace(ENV_REFERENCE, (_match, braced: string | undefined, bare: string | undefined) => {
      const variable = (braced ?? bare) as string;
      return allowed.has(variable) ? (env[variable] ?? '') : '';
    });
  }
  return headers;
}

/** Replaces every header value in `text` (a failure message) so a secret never travels in an event, error or span. */
function withoutSecrets(text: string, headers: Readonly<Record<string, string>>): string {
  let clean = text;
  for (const value of Object.values(headers)) if (value.length >= 4) clean = clean.split(value).join('[header value]');
  return clean;
}

/** One POST's answer: a status with its `Location`, or the body within the cap. */
interface Answer {
  readonly status: number;
  readonly location?: string;
  readonly body: string;
  readonly overflow: boolean;
}

/** Reads a response body up to `maxBytes`; past it the response is destroyed and `overflow` set. */
function readBody(response: IncomingMessage, maxBytes: number): Promise<{ body: string; overflow: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        response.destroy();
        resolve({ body: '', overflow: true });
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve({ body: Buffer.concat(chunks).toString('utf8'), overflow: false }));
    response.on('error', reject);
    response.on('close', () => {
      if (!response.complete) reject(new Error('the server closed the connection before the answer ended'));
    });
  });
}

/** POSTs `body` to `url` once (no redirect followed); names that are not listed are resolved through the guard. */
function post(url: URL, body: string, headers: OutgoingHttpHeaders, options: { listed: boolean; signal: AbortSignal; maxBytes: number }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, {
      method: 'POST',
      headers,
      signal: options.signal,
      // a connection per run: no pooled socket outlives the engine or crosses from one URL's checks to another's
      agent: false,
      ...(options.listed ? {} : { lookup: guardedLookup(url) }),
    });
    request.on('error', reject);
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        response.resume();
        resolve({ status, location: response.headers.location, body: '', overflow: false });
        return;
      }
      readBody(response, options.maxBytes).then(({ body: text, overflow }) => resolve({ status, body: text, overflow }), reject);
    });
    request.end(body);
  });
}

/** The next URL of a 307/308 answer, or why it is not followed. */
function redirectTarget(answer: Answer, from: URL, hop: number): URL | string {
  if (answer.status !== 307 && answer.status !== 308) {
    return `http hook answered HTTP ${answer.status} ${STATUS_CODES[answer.status] ?? ''}`.trimEnd() + '; only 307 and 308 redirects are followed (they keep the POST and its body)';
  }
  if (hop >= MAX_REDIRECTS) return `http hook was redirected more than ${MAX_REDIRECTS} times`;
  if (!answer.location) return `http hook answered HTTP ${answer.status} without a Location`;
  let next: URL;
  try {
    next = new URL(answer.location, from);
  } catch {
    return `http hook was redirected to something that is not a URL`;
  }
  const parsed = parseHookUrl(next.href);
  return 'problem' in parsed ? `http hook refused a redirect: ${parsed.problem}` : parsed.url;
}

/** Runs the POSTs of one hook run, following 307/308 redirects whose targets pass the same checks. */
async function exchange(target: HttpHookTarget, inputJson: string, headers: Record<string, string>, settings: HttpHookSettings, signal: AbortSignal): Promise<HandlerRunResult> {
  const sent: OutgoingHttpHeaders = {
    'content-type': 'application/json',
    'user-agent': `switchyard-hooks/${VERSION}`,
    ...headers,
    'content-length': Buffer.byteLength(inputJson),
  };
  let url = target.url;
  for (let hop = 0; ; hop++) {
    const refused = urlRefusal(url, settings.allowed);
    if (refused) return failedRun(hop === 0 ? refused : refused.replace('http hook refused: ', 'http hook refused a redirect: '));
    const answer = await post(url, inputJson, sent, { listed: isListed(url, settings.allowed), signal, maxBytes: settings.maxOutputBytes });
    if (answer.status >= 300 && answer.status < 400) {
      const next = redirectTarget(answer, url, hop);
      if (typeof next === 'string') return failedRun(next);
      url = next;
      continue;
    }
    if (answer.status < 200 || answer.status >= 300) return failedRun(`http hook answered HTTP ${answer.status} ${STATUS_CODES[answer.status] ?? ''}`.trimEnd());
    if (answer.overflow) return failedRun(`http hook response exceeded ${settings.maxOutputBytes} bytes; output ignored`);
    return { exitCode: 0, stdout: answer.body, stderr: '' };
  }
}

function failedRun(error: string): HandlerRunResult {
  return { exitCode: null, stdout: '', stderr: '', error };
}

/**
 * Runs an `http` hook: POSTs the stdin JSON to its URL and reads a 2xx answer's body as a command's
 * stdout (exit 0). Anything else — another status, a redirect that is not followed, a refused
 * address, a connection error, a body past `maxOutputBytes`, the timeout — is a failed run. Header
 * values never appear in what it returns. Never rejects.
 */
export async function runHttpHook(target: HttpHookTarget, inputJson: string, signal: AbortSignal, settings: HttpHookSettings): Promise<HandlerRunResult> {
  const headers = interpolatedHeaders(target, settings.env);
  const problem = headerProblem(headers);
  if (problem) return failedRun(`http hook ${redactUrl(target.url)} ${problem.replace(/ whose value .*$/, ' whose value cannot be sent (after filling in environment variables)')}`);
  const result = await runWithDeadline(
    target.timeoutSec,
    signal,
    (own) => exchange(target, inputJson, headers, settings, own),
    (error) => {
      const message = errorMessage(error);
      return message.startsWith('http hook refused') ? message : `http hook failed: ${message}`;
    },
  );
  return result.error === undefined ? result : { ...result, error: withoutSecrets(result.error, headers) };
}
