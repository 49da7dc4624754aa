/** Any value that survives `JSON.stringify` → `JSON.parse` unchanged. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object (the shape of function-tool arguments and most tool results). */
export type JsonObject = { [key: string]: JsonValue };

/**
 * The JSON Schema subset Switchyard reads: enough to describe tool
 * parameters, render TypeScript declarations for Code Mode and validate arguments with ajv.
 * Unknown keywords are kept and passed through untouched (index signature), so a schema from an
 * MCP server or a plugin round-trips byte for byte.
 */
export interface JsonSchema {
  /** A JSON type name or a list of them (`["string", "null"]`). */
  type?: string | string[];
  /** Human text; becomes a `//` comment in Code Mode declarations. */
  description?: string;
  /** Object members, in author order (renderers sort them by name). */
  properties?: Record<string, JsonSchema>;
  /** Names of required object members; the rest render with `?`. */
  required?: string[];
  /** `false` closes the object, a schema types the index signature. */
  additionalProperties?: boolean | JsonSchema;
  /** Array element schema. */
  items?: JsonSchema | JsonSchema[];
  /** Alternatives (rendered as a TypeScript union). */
  anyOf?: JsonSchema[];
  /** Alternatives (treated like `anyOf` by renderers). */
  oneOf?: JsonSchema[];
  /** Literal alternatives. */
  enum?: JsonValue[];
  /** A single literal. */
  const?: JsonValue;
  /** A JSON pointer into `$defs` / `definitions`. */
  $ref?: string;
  /** Named sub-schemas referenced by `$ref`. */
  $defs?: Record<string, JsonSchema>;
  /** Draft-07 spelling of `$defs`. */
  definitions?: Record<string, JsonSchema>;
  /** Any other keyword, passed through untouched. */
  [keyword: string]: unknown;
}

/** True for a plain JSON object (not null, not an array). Never throws. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
