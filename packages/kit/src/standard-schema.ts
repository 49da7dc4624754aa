import type { JsonSchema, JsonValue } from '@switchyard/protocol';

/**
 * A value implementing the Standard Schema interface (`~standard`, version 1), which zod 4,
 * valibot, arktype and others implement. Declared here structurally so this package stays
 * dependency-free; any conforming schema is accepted.
 */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    /** The library's name (`zod`, `valibot`, `arktype`). */
    readonly vendor: string;
    /** Checks a value: `{ value }` on success, `{ issues }` otherwise; may return a promise. */
    readonly validate: (value: unknown) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    /** Type carriers only (never read at run time). */
    readonly types?: { readonly input: Input; readonly output: Output };
    /**
     * The Standard JSON Schema extension (zod ≥ 4.2, arktype): renders the schema as JSON Schema.
     * A library without it needs `defineFunctionTool({ jsonSchema })`.
     */
    readonly jsonSchema?: { readonly input: (options: { readonly target: string }) => Record<string, unknown> };
  };
}

/** The outcome of a Standard Schema `validate`. */
export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> }> };

/** The output type of a Standard Schema. */
export type StandardSchemaOutput<S> = S extends StandardSchema<unknown, infer Output> ? Output : never;

/** True for a Standard Schema value (it has a `~standard` object with a `validate` function). Never throws. */
export function isStandardSchema(value: unknown): value is StandardSchema {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  const standard = (value as { '~standard'?: { validate?: unknown } })['~standard'];
  return typeof standard === 'object' && standard !== null && typeof standard.validate === 'function';
}

/** Renders the issue list of a failed Standard Schema check: `arguments.city: Expected string; arguments.days: Required`. */
export function describeStandardIssues(issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> }>): string {
  return issues
    .map((issue) => {
      const path = (issue.path ?? []).map((segment) => String(typeof segment === 'object' && segment !== null ? segment.key : segment));
      return `${['arguments', ...path].join('.')}: ${issue.message}`;
    })
    .join('; ');
}

// ---------------------------------------------------------------------------------------------
// Argument types from a JSON Schema written `as const` (or inline, which infers the same).

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type RequiredKeys<S> = S extends { readonly required: ReadonlyArray<infer R> } ? R : never;
type ObjectOf<S> = S extends { readonly properties: infer P }
  ? Simplify<
      { -readonly [K in keyof P & RequiredKeys<S>]: InferJsonSchema<P[K]> } & { -readonly [K in Exclude<keyof P, RequiredKeys<S>>]?: InferJsonSchema<P[K]> }
    >
  : { [key: string]: JsonValue };
type TypeNamed<T, S> = T extends 'string'
  ? string
  : T extends 'number' | 'integer'
    ? number
    : T extends 'boolean'
      ? boolean
      : T extends 'null'
        ? null
        : T extends 'array'
          ? S extends { readonly items: infer I }
            ? I extends ReadonlyArray<unknown>
              ? JsonValue[]
              : InferJsonSchema<I>[]
            : JsonValue[]
          : T extends 'object'
            ? ObjectOf<S>
            : JsonValue;

/**
 * The TypeScript type a JSON Schema describes, for schemas known to the compiler (inline or
 * `as const`): `type`, `properties` / `required`, `items`, `enum`, `const`, `anyOf` / `oneOf`.
 * Anything else is `JsonValue`.
 */
export type InferJsonSchema<S> = S extends { readonly const: infer C }
  ? C
  : S extends { readonly enum: ReadonlyArray<infer E> }
    ? E
    : S extends { readonly anyOf: ReadonlyArray<infer A> }
      ? InferJsonSchema<A>
      : S extends { readonly oneOf: ReadonlyArray<infer A> }
        ? InferJsonSchema<A>
        : S extends { readonly type: ReadonlyArray<infer T> }
          ? TypeNamed<T, S>
          : S extends { readonly type: infer T }
            ? TypeNamed<T, S>
            : JsonValue;

/**
 * A JSON Schema as the compiler sees one written `as const`: the keywords of `JsonSchema`, every
 * member and list readonly. Every `JsonSchema` is one too, so `parameters` and `outputSchema` take a
 * schema declared once `as const` (whose `required: readonly ['city']` a `string[]` refuses) as
 * well as an inline one.
 */
interface ConstJsonSchema {
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly properties?: { readonly [name: string]: ConstJsonSchema };
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | ConstJsonSchema;
  readonly items?: ConstJsonSchema | readonly ConstJsonSchema[];
  readonly anyOf?: readonly ConstJsonSchema[];
  readonly oneOf?: readonly ConstJsonSchema[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly $ref?: string;
  readonly $defs?: { readonly [name: string]: ConstJsonSchema };
  readonly definitions?: { readonly [name: string]: ConstJsonSchema };
  readonly [keyword: string]: unknown;
}

/** What a function tool's `parameters` may be: a JSON Schema (inline or `as const`) or a Standard Schema value. */
export type ToolParameters = JsonSchema | ConstJsonSchema | StandardSchema;

/** What a function tool's `outputSchema` may be: a JSON Schema, inline or `as const`. */
export type ToolOutputSchema = JsonSchema | ConstJsonSchema;

/**
 * The argument type of a tool with these `parameters`: a Standard Schema's output, else the
 * inferred JSON Schema type when it is an object type, else `JsonObject`.
 */
export type ToolArguments<P> = P extends StandardSchema
  ? StandardSchemaOutput<P>
  : InferJsonSchema<P> extends infer A
    ? [A] extends [object]
      ? A extends ReadonlyArray<unknown>
        ? { [key: string]: JsonValue }
        : A
      : { [key: string]: JsonValue }
    : never;
