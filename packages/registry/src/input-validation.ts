import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019.js';
import Ajv2020 from 'ajv/dist/2020.js';
import { RespondToModelError, errorMessage, type JsonSchema, type JsonValue } from '@switchyard/protocol';

/** At most this many schema errors are listed in one model-visible message. */
const MAX_LISTED_ERRORS = 8;

type Dialect = 'draft-07' | '2019-09' | '2020-12';

const instances = new Map<Dialect, Ajv>();
/** One compiled validator per schema object (`null`: ajv could not compile it; validation is skipped). */
const compiled = new WeakMap<object, ValidateFunction | null>();

function ajvFor(dialect: Dialect): Ajv {
  let ajv = instances.get(dialect);
  if (!ajv) {
    const options = { allErrors: true, strict: false, validateFormats: false, addUsedSchema: false, logger: false as const };
    ajv = dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options);
    instances.set(dialect, ajv);
  }
  return ajv;
}

function dialectOf(schema: JsonSchema): Dialect {
  const uri = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (uri.includes('2020-12')) return '2020-12';
  if (uri.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

/**
 * The compiled validator of a schema, compiled once and cached for as long as the schema object
 * lives. `null` when ajv cannot compile the schema: a broken schema is the tool author's bug, not
 * the model's, so the call is dispatched unvalidated rather than refused.
 */
export function compiledValidator(schema: JsonSchema): ValidateFunction | null {
  const cached = compiled.get(schema);
  if (cached !== undefined) return cached;
  let validate: ValidateFunction | null = null;
  try {
    // `$schema` only picks the dialect; dropping it lets draft-04/06 schemas compile as draft-07.
    const { $schema: _ignored, ...body } = schema;
    const ajv = ajvFor(dialectOf(schema));
    validate = ajv.compile(body);
    // The validator keeps working after removal; removing it keeps ajv's own cache from growing.
    ajv.removeSchema(body);
  } catch {
    validate = null;
  }
  compiled.set(schema, validate);
  return validate;
}

/**
 * Checks `value` against `schema`. Returns `undefined` when valid (or when the schema cannot be
 * compiled), else the list of failures, one per failing path: `arguments.city must be string`.
 */
export function schemaFailures(schema: JsonSchema, value: JsonValue): string[] | undefined {
  const validate = compiledValidator(schema);
  if (!validate) return undefined;
  try {
    if (validate(value)) return undefined;
  } catch (error) {
    // ajv's deep equality (enum / const / uniqueItems) calls a value's own `valueOf` / `toString`;
    // arguments such as {"valueOf": 1} make it throw. That is the model's input, so it is refused.
    return [`arguments could not be checked against the schema: ${errorMessage(error)}`];
  }
  const failures: string[] = [];
  for (const error of validate.errors ?? []) {
    const line = describeError(error);
    if (!failures.includes(line)) failures.push(line);
  }
  return failures.length > 0 ? failures : ['arguments do not match the schema'];
}

/**
 * Validates function arguments against a tool's parameters schema. Throws a `RespondToModelError`
 * (code `INVALID_INPUT`) naming each failing path:
 * `invalid arguments for get_weather: arguments.city must be string; arguments.days is required`.
 */
export function validateArguments(display: string, schema: JsonSchema, value: JsonValue): void {
  const failures = schemaFailures(schema, value);
  if (!failures) return;
  throw new RespondToModelError(`invalid arguments for ${display}: ${listFailures(failures)}`, { code: 'INVALID_INPUT' });
}

/** Joins failures with `; `, listing at most a handful and counting the rest. */
export function listFailures(failures: readonly string[]): string {
  const listed = failures.slice(0, MAX_LISTED_ERRORS).join('; ');
  const rest = failures.length - MAX_LISTED_ERRORS;
  return rest > 0 ? `${listed}; and ${rest} more` : listed;
}

function describeError(error: ErrorObject): string {
  const segments = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map(unescapePointer);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${renderPath([...segments, String(params.missingProperty)])} is required`;
    case 'additionalProperties':
      return `${renderPath([...segments, String(params.additionalProperty)])} is not allowed`;
    case 'enum':
      return `${renderPath(segments)} ${error.message}: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${renderPath(segments)} ${error.message}: ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${renderPath(segments)} ${error.message ?? 'is invalid'}`;
  }
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** `arguments`, `arguments.city`, `arguments.items[0]`, `arguments["odd key"]`. */
function renderPath(segments: readonly string[]): string {
  let out = 'arguments';
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) out += `[${segment}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment)) out += `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** The protocol's argument parser, re-exported for existing callers. */
export { parseFunctionArguments } from '@switchyard/kit/internal';
