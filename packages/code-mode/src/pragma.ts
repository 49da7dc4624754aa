import { RespondToModelError } from '@switchyard/protocol';
import { serdeJsonSyntaxError } from '@switchyard/kit/internal';

/** The parsed `exec` input: the source without its pragma line and the pragma fields (unset when absent or null). */
export interface ExecSource {
  code: string;
  yieldTimeMs?: number;
  maxOutputTokens?: number;
}

const PREFIX = '// @exec:';
const FIELDS = '`yield_time_ms` and `max_output_tokens`';
const NOT_OBJECT = `exec pragma must be a JSON object with supported fields ${FIELDS}`;

function fail(message: string): never {
  throw new RespondToModelError(message, { code: 'INVALID_INPUT' });
}

function field(object: Record<string, unknown>, key: 'yield_time_ms' | 'max_output_tokens'): number | undefined {
  const value = object[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    fail(`exec pragma fields ${FIELDS} must be non-negative safe integers: invalid value ${JSON.stringify(value)} for \`${key}\``);
  }
  if (value > Number.MAX_SAFE_INTEGER) fail(`exec pragma field \`${key}\` must be a non-negative safe integer`);
  return value;
}

/**
 * Parses `exec` input: an optional first-line
 * `// @exec: {"yield_time_ms": …, "max_output_tokens": …}` pragma, then JavaScript. Throws a
 * `RespondToModelError` with the reference text for every malformed input.
 */
export function parseExecSource(input: string): ExecSource {
  if (input.trim() === '') {
    fail(
      'exec expects raw JavaScript source text (non-empty). Provide JS only, optionally with first-line `// @exec: {"yield_time_ms": 10000, "max_output_tokens": 1000}`.',
    );
  }
  const newline = input.indexOf('\n');
  const firstLine = newline === -1 ? input : input.slice(0, newline);
  const trimmed = firstLine.trimStart();
  if (!trimmed.startsWith(PREFIX)) return { code: input };
  const rest = newline === -1 ? '' : input.slice(newline + 1);
  if (rest.trim() === '') fail('exec pragma must be followed by JavaScript source on subsequent lines');
  const directive = trimmed.slice(PREFIX.length).trim();
  if (directive === '') fail(NOT_OBJECT);
  let value: unknown;
  try {
    value = JSON.parse(directive);
  } catch (error) {
    // serde_json's words and position, as the reference reads the pragma
    fail(`exec pragma must be valid JSON with supported fields ${FIELDS}: ${serdeJsonSyntaxError(directive) ?? (error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(NOT_OBJECT);
  const object = value as Record<string, unknown>;
  const unknownKey = Object.keys(object).find((key) => key !== 'yield_time_ms' && key !== 'max_output_tokens');
  if (unknownKey !== undefined) fail(`exec pragma only supports ${FIELDS}; got \`${unknownKey}\``);
  const result: ExecSource = { code: rest };
  const yieldTimeMs = field(object, 'yield_time_ms');
  const maxOutputTokens = field(object, 'max_output_tokens');
  if (yieldTimeMs !== undefined) result.yieldTimeMs = yieldTimeMs;
  if (maxOutputTokens !== undefined) result.maxOutputTokens = maxOutputTokens;
  return result;
}
