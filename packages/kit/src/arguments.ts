import { RespondToModelError, errorMessage, isJsonObject, type JsonObject, type JsonValue, type ToolInvocation } from '@switchyard/protocol';
import { serdeJsonSyntaxError } from './serde-arguments';

/**
 * Parses function-tool arguments as the model sent them (the raw `arguments` string). Blank text
 * means `{}`. Throws a `RespondToModelError` (code `INVALID_INPUT`) with the reference text
 * "failed to parse function arguments: …" for malformed JSON, in serde_json's words and position
 * (`EOF while parsing a value at line 1 column 8`), as the reference answers. The one parser every package uses.
 */
export function parseFunctionArguments(raw: string): JsonValue {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as JsonValue;
  } catch (error) {
    const text = serdeJsonSyntaxError(raw) ?? errorMessage(error);
    throw new RespondToModelError(`failed to parse function arguments: ${text}`, { code: 'INVALID_INPUT', cause: error });
  }
}

/**
 * {@link parseFunctionArguments}, then requires a JSON object: anything else throws
 * "failed to parse function arguments: expected a JSON object" (code `INVALID_INPUT`).
 */
export function parseObjectArguments(raw: string): JsonObject {
  return requireObject(parseFunctionArguments(raw));
}

function requireObject(value: JsonValue): JsonObject {
  if (!isJsonObject(value)) throw new RespondToModelError('failed to parse function arguments: expected a JSON object', { code: 'INVALID_INPUT' });
  return value;
}

/**
 * A function call's arguments object, parsed once: the registry's `invocation.args` when it parsed
 * them while validating, else {@link parseObjectArguments} of the payload's text (an executor
 * that skips validation, or an invocation built outside the registry). Same errors as
 * {@link parseObjectArguments}; a payload that is not a function call throws
 * "<tool> handler received unsupported payload".
 */
export function invocationArguments(invocation: ToolInvocation, tool: string): JsonObject {
  const payload = invocation.payload;
  if (payload.kind !== 'function') throw new RespondToModelError(`${tool} handler received unsupported payload`);
  return invocation.args === undefined ? parseObjectArguments(payload.arguments) : requireObject(invocation.args);
}
