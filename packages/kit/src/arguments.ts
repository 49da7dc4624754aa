import { RespondToModelError, errorMessage, isJsonObject, type JsonObject, type JsonValue } from '@switchyard/protocol';

/**
 * Parses function-tool arguments as the model sent them (the raw `arguments` string). Blank text
 * means `{}`. Throws a `RespondToModelError` (code `INVALID_INPUT`) with the reference text
 * "failed to parse function arguments: …" for malformed JSON. The one parser every package uses.
 */
export function parseFunctionArguments(raw: string): JsonValue {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as JsonValue;
  } catch (error) {
    throw new RespondToModelError(`failed to parse function arguments: ${errorMessage(error)}`, { code: 'INVALID_INPUT', cause: error });
  }
}

/**
 * {@link parseFunctionArguments}, then requires a JSON object: anything else throws
 * "failed to parse function arguments: expected a JSON object" (code `INVALID_INPUT`).
 */
export function parseObjectArguments(raw: string): JsonObject {
  const value = parseFunctionArguments(raw);
  if (!isJsonObject(value)) throw new RespondToModelError('failed to parse function arguments: expected a JSON object', { code: 'INVALID_INPUT' });
  return value;
}
