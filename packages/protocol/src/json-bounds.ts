/**
 * How deep and how large a JSON value may be before a policy layer (hooks) refuses to handle it.
 * Within these bounds `JSON.stringify`, `JSON.parse` and a recursive walk of the value cannot
 * overflow the stack or exceed V8's string length, so a check never throws for a bounded value.
 */
export interface JsonBounds {
  /** Deepest nesting of arrays and objects (`{"a":1}` is depth 1, a scalar depth 0). */
  readonly maxDepth: number;
  /** Largest serialized size, in UTF-16 code units of `JSON.stringify` output without escapes. */
  readonly maxChars: number;
}

/**
 * The bounds the registry and the hook engine apply to every hook input: 100 levels and
 * 16 Mi characters. Real tool arguments stay far inside them; a value past them is refused
 * (`INVALID_INPUT`) instead of reaching the handler without its hooks.
 */
export const DEFAULT_HOOK_INPUT_BOUNDS: JsonBounds = Object.freeze({ maxDepth: 100, maxChars: 16 * 1024 * 1024 });

/**
 * Checks that `value` is plain JSON (null, booleans, finite numbers, strings, arrays, objects
 * with the plain or null prototype) within `bounds`. Returns `undefined` when it is, otherwise a
 * short reason ("it is nested deeper than 100 levels", "it is larger than 16777216 characters",
 * "it holds a function at tool_input.x"). Iterative (no recursion), stops at the first violation,
 * visits each value once; cycles are caught by the depth bound. Never throws.
 */
export function jsonBoundsViolation(value: unknown, bounds: JsonBounds = DEFAULT_HOOK_INPUT_BOUNDS): string | undefined {
  try {
    return walk(value, bounds);
  } catch (error) {
    // A hostile getter or proxy: the value cannot be read safely, so it is not plain JSON.
    return `it cannot be read as JSON (${error instanceof Error ? error.message : String(error)})`;
  }
}

/** An array or object being visited: its members are read one at a time (the stack is at most `maxDepth` deep). */
interface Frame {
  readonly container: unknown[] | Record<string, unknown>;
  /** Object keys; `undefined` for an array. */
  readonly keys: string[] | undefined;
  next: number;
}

function walk(root: unknown, bounds: JsonBounds): string | undefined {
  const stack: Frame[] = [];
  let chars = 0;
  const where = () => at(stack);
  /** Accounts for one value; pushes a frame for a container. Returns a violation or undefined. */
  const visit = (value: unknown): string | undefined => {
    switch (typeof value) {
      case 'string':
        chars += value.length + 2;
        break;
      case 'boolean':
        chars += 5;
        break;
      case 'number':
        if (!Number.isFinite(value)) return `it holds a non-finite number${where()}`;
        chars += 24;
        break;
      case 'object': {
        if (value === null) {
          chars += 4;
          break;
        }
        if (stack.length + 1 > bounds.maxDepth) return `it is nested deeper than ${bounds.maxDepth} levels`;
        if (Array.isArray(value)) {
          chars += 2 + value.length;
          stack.push({ container: value, keys: undefined, next: 0 });
          break;
        }
        const prototype = Object.getPrototypeOf(value);
        if (prototype !== Object.prototype && prototype !== null) return `it holds a non-plain object${where()}`;
        const keys = Object.keys(value);
        chars += 2 + keys.length;
        stack.push({ container: value as Record<string, unknown>, keys, next: 0 });
        break;
      }
      default:
        return `it holds ${typeof value === 'undefined' ? 'an undefined value' : `a ${typeof value}`}${where()}`;
    }
    return chars > bounds.maxChars ? `it is larger than ${bounds.maxChars} characters` : undefined;
  };
  const first = visit(root);
  if (first) return first;
  while (stack.length > 0) {
    const frame = stack[stack.length - 1];
    const length = frame.keys ? frame.keys.length : (frame.container as unknown[]).length;
    if (frame.next >= length) {
      stack.pop();
      continue;
    }
    const index = frame.next++;
    let member: unknown;
    if (frame.keys) {
      const key = frame.keys[index];
      chars += key.length + 3;
      member = (frame.container as Record<string, unknown>)[key];
    } else {
      member = (frame.container as unknown[])[index];
    }
    const violation = visit(member);
    if (violation) return violation;
  }
  return undefined;
}

/** ` at a.b[2]` for the member being visited (the last read of each open container), `""` at the root. */
function at(stack: readonly Frame[]): string {
  let path = '';
  for (const frame of stack) {
    const index = frame.next - 1;
    path += frame.keys ? `.${frame.keys[index]}` : `[${index}]`;
  }
  return path === '' ? '' : ` at ${path.startsWith('.') ? path.slice(1) : path}`;
}
