import { SwitchyardError } from '@switchyard/protocol';

/**
 * Checks one option value. Returns `undefined` when the value is acceptable, else what it must be
 * (`"must be a string"`), which {@link checkOptions} puts after the option's name. `path` is the
 * option's dotted name (`provider.namespaceTools`), for rules that check nested objects. Must not throw.
 */
export type OptionRule = (value: unknown, path: string) => string | undefined;

/** The rule of every option of `T` (all keys, optional ones included, so a new option cannot be forgotten). */
export type OptionsShape<T> = { readonly [K in keyof Required<T>]: OptionRule };

/** A rule marked as required: {@link checkOptions} refuses the option's absence. */
interface RequiredRule extends OptionRule {
  readonly required: true;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'function') return 'a function';
  return typeof value === 'object' ? 'an object' : typeof value;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Levenshtein distance, case-insensitive; small inputs only (option names). */
function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, index) => index);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[y.length];
}

/**
 * The candidate closest to `given`, if any is close: equal but for case, one containing the other
 * (`files` → `configFiles`), or at most a third of the longer name's characters apart (`toolmode`,
 * `tool` → `tools`). Ties go to the earlier candidate. Never throws.
 */
export function closestName(given: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  const lower = given.toLowerCase();
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    const distance = editDistance(given, candidate);
    const contained = lower.length >= 3 && other.length >= 3 && (other.includes(lower) || lower.includes(other));
    const limit = Math.max(1, Math.floor(Math.max(given.length, candidate.length) / 3));
    if (distance > limit && !contained) continue;
    const score = contained && distance > limit ? limit + 0.5 : distance;
    if (score < bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

function failure(where: string, message: string): SwitchyardError {
  return new SwitchyardError('CONFIG', `${where}: ${message}`);
}

/**
 * Checks a host's options object against `shape` and throws a `SwitchyardError` with code `CONFIG`
 * at the first problem, naming the option and, for a typo, the closest valid one:
 * "createSession: unknown option `toolmode`; did you mean `toolMode`?",
 * "openaiResponses: option `baseURL` must be a string; got 42". An option set to `undefined`
 * counts as absent. `options` itself may be `undefined` when `optional` is set. Returns nothing;
 * the caller reads its (now checked) object as before.
 */
export function checkOptions<T>(where: string, options: unknown, shape: OptionsShape<T>, settings: { optional?: boolean } = {}): asserts options is T {
  if (options === undefined && settings.optional) return;
  let problem: string | undefined;
  try {
    problem = shapeProblem(options, shape as Record<string, OptionRule>, '');
  } catch (error) {
    // a getter or proxy that throws: still a configuration problem, never a crash of the caller
    problem = `options could not be read: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (problem) throw failure(where, problem);
}

function shapeProblem(value: unknown, shape: Record<string, OptionRule>, prefix: string): string | undefined {
  if (!isPlainObject(value)) {
    return prefix ? `option \`${prefix.slice(0, -1)}\` must be an object; got ${describeValue(value)}` : `options must be an object; got ${describeValue(value)}`;
  }
  const known = Object.keys(shape);
  for (const key of Object.keys(value)) {
    if (Object.prototype.hasOwnProperty.call(shape, key)) continue;
    const suggestion = closestName(key, known);
    const tail = suggestion !== undefined ? `did you mean \`${prefix}${suggestion}\`?` : `the options are ${known.map((name) => `\`${prefix}${name}\``).join(', ')}`;
    return `unknown option \`${prefix}${key}\`; ${tail}`;
  }
  for (const key of known) {
    const rule = shape[key];
    const given = value[key];
    if (given === undefined) {
      if ((rule as Partial<RequiredRule>).required) return `option \`${prefix}${key}\` is required`;
      continue;
    }
    const problem = rule(given, `${prefix}${key}`);
    if (problem === undefined) continue;
    // a nested shape reports its own full sentence
    return problem.startsWith('unknown option') || problem.startsWith('option `') ? problem : `option \`${prefix}${key}\` ${problem}`;
  }
  return undefined;
}

const typed =
  (type: 'string' | 'number' | 'boolean' | 'function' | 'object', article: string): OptionRule =>
  (value) =>
    typeof value === type && value !== null && !(type === 'object' && Array.isArray(value)) ? undefined : `must be ${article} ${type}; got ${describeValue(value)}`;

/** Rules for {@link checkOptions}, each a plain function so a package can add its own. */
export const optionRules = {
  /** Any value (documented elsewhere, checked by its consumer). */
  any: (): OptionRule => () => undefined,
  string: (): OptionRule => typed('string', 'a'),
  boolean: (): OptionRule => typed('boolean', 'a'),
  function: (): OptionRule => typed('function', 'a'),
  /** Any non-null, non-array object (an instance, a record). */
  object: (): OptionRule => typed('object', 'an'),
  /** A finite number, optionally an integer and within bounds (inclusive). */
  number:
    (bounds: { min?: number; max?: number; integer?: boolean; allowInfinity?: boolean } = {}): OptionRule =>
    (value) => {
      const kind = bounds.integer ? 'an integer' : 'a number';
      const range =
        bounds.min !== undefined && bounds.max !== undefined
          ? ` from ${bounds.min} to ${bounds.max}`
          : bounds.min !== undefined
            ? ` ≥ ${bounds.min}`
            : bounds.max !== undefined
              ? ` ≤ ${bounds.max}`
              : '';
      const expected = `must be ${kind}${range}; got ${describeValue(value)}`;
      if (typeof value !== 'number' || Number.isNaN(value)) return expected;
      if (!Number.isFinite(value)) return bounds.allowInfinity && value > 0 ? undefined : expected;
      if (bounds.integer && !Number.isInteger(value)) return expected;
      if (bounds.min !== undefined && value < bounds.min) return expected;
      if (bounds.max !== undefined && value > bounds.max) return expected;
      return undefined;
    },
  /** One of the listed literal values; a near miss gets a suggestion (`"codemode"` → `"code-mode"`). */
  oneOf:
    (...values: ReadonlyArray<string | number | boolean>): OptionRule =>
    (value) => {
      if (values.includes(value as string)) return undefined;
      const strings = values.filter((candidate): candidate is string => typeof candidate === 'string');
      const suggestion = typeof value === 'string' ? closestName(value, strings) : undefined;
      return `must be one of ${values.map((candidate) => JSON.stringify(candidate)).join(', ')}; got ${describeValue(value)}${suggestion !== undefined ? ` (did you mean ${JSON.stringify(suggestion)}?)` : ''}`;
    },
  /** An array whose every element passes `element` (reported with its index). */
  listOf:
    (element: OptionRule, noun = 'a list'): OptionRule =>
    (value, path) => {
      if (!Array.isArray(value)) return `must be ${noun}; got ${describeValue(value)}`;
      for (let index = 0; index < value.length; index++) {
        const problem = element(value[index], `${path}[${index}]`);
        if (problem !== undefined) return problem.startsWith('option `') ? problem : `option \`${path}[${index}]\` ${problem}`;
      }
      return undefined;
    },
  /** The first rule that accepts the value wins; otherwise the message joins theirs with "or". */
  anyOf:
    (...rules: OptionRule[]): OptionRule =>
    (value, path) => {
      const problems: string[] = [];
      for (const rule of rules) {
        const problem = rule(value, path);
        if (problem === undefined) return undefined;
        // the value had this rule's type and a part of it failed (`tools[1]`): that is the problem to name
        if (problem.startsWith('option `') || problem.startsWith('unknown option')) return problem;
        problems.push(problem.replace(/; got .*$/s, '').replace(/^must be /, ''));
      }
      return `must be ${problems.join(' or ')}; got ${describeValue(value)}`;
    },
  /** A nested options object, checked with the same rules (unknown keys named with their full path). */
  shape:
    <T>(shape: OptionsShape<T>): OptionRule =>
    (value, path) =>
      shapeProblem(value, shape as Record<string, OptionRule>, `${path}.`),
  /** Marks a rule as required: the option may not be absent or `undefined`. */
  required: (rule: OptionRule): OptionRule => Object.assign((value: unknown, path: string) => rule(value, path), { required: true as const }),
};
