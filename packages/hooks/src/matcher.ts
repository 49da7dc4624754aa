/** A compiled matcher: true when any of the names (canonical hook name first, then aliases) matches. */
export type Matcher = (names: readonly string[]) => boolean;

const EXACT = /^[A-Za-z0-9_|]+$/;

/**
 * Compiles a matcher: absent, `""` or `"*"` match everything; a matcher made only
 * of `[A-Za-z0-9_|]` is an exact match against its `|`-separated alternatives; anything else is an
 * unanchored JavaScript regular expression. Returns `{ error }` for an invalid regex; never throws.
 */
export function compileMatcher(matcher: string | undefined): { matcher: Matcher } | { error: string } {
  if (matcher === undefined || matcher === '' || matcher === '*') return { matcher: () => true };
  if (EXACT.test(matcher)) {
    const alternatives = new Set(matcher.split('|'));
    return { matcher: (names) => names.some((name) => alternatives.has(name)) };
  }
  let regex: RegExp;
  try {
    regex = new RegExp(matcher);
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
  return { matcher: (names) => names.some((name) => regex.test(name)) };
}
