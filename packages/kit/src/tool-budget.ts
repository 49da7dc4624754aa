import { codeModeName, displayName, type ToolName } from '@switchyard/protocol';

/** The default token budget of a tool table. */
export const DEFAULT_TOOL_BUDGET_TOKENS = 2_000;

// Cost model, fitted on tool-catalog text against o200k (the planner README has the figures). It
// follows o200k's pre-tokenizer: words split at a lower→upper case change; one space or one
// punctuation character right before a word joins it (" word", "_name" are one token); a word
// costs one token per 6 ASCII letters and per 3.5 other alphabetic letters (accented Latin,
// Cyrillic, Greek, …); CJK and other wide scripts one per 1.3 characters; digits one per 2;
// other punctuation one per 4 characters; any other whitespace run one token.
const ASCII_LETTERS_PER_TOKEN = 6;
const OTHER_LETTERS_PER_TOKEN = 3.5;
const WIDE_CHARACTERS_PER_TOKEN = 1.3;
const DIGITS_PER_TOKEN = 2;
const PUNCTUATION_PER_TOKEN = 4;

const LETTER = 0;
const DIGIT = 1;
const SPACE = 2;
const PUNCTUATION = 3;
const WIDE = 4;

function kindOf(code: number): number {
  if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90)) return LETTER;
  if (code >= 48 && code <= 57) return DIGIT;
  if (code === 32 || code === 9 || code === 10 || code === 13) return SPACE;
  if (code < 0xc0) return PUNCTUATION;
  if (code <= 0x2fff) return LETTER;
  return WIDE;
}

/**
 * Estimated o200k tokens of `text`, without a vocabulary: one pass over the characters with the
 * cost model above. On tool-catalog text (English descriptions, identifiers, JSON Schema,
 * TypeScript declarations, the JSON of a request's tools) it lands between about 5 % below and
 * 25 % above the real count; random strings (hashes, base64) are underestimated, so a host with
 * such text should pass a real tokenizer as {@link ToolBudget.countTokens}. Pure, never throws.
 */
export function estimateTokens(text: string): number {
  const length = text.length;
  const kindAt = (index: number) => (index < length ? kindOf(text.charCodeAt(index)) : -1);
  let tokens = 0;
  let index = 0;
  while (index < length) {
    const code = text.charCodeAt(index);
    const kind = kindOf(code);
    if (kind === LETTER) {
      let ascii = 0;
      let other = 0;
      let previousLower = false;
      while (index < length) {
        const next = text.charCodeAt(index);
        if (kindOf(next) !== LETTER) break;
        if (previousLower && next >= 65 && next <= 90) {
          tokens += Math.ceil(ascii / ASCII_LETTERS_PER_TOKEN + other / OTHER_LETTERS_PER_TOKEN);
          ascii = 0;
          other = 0;
        }
        previousLower = next >= 97 && next <= 122;
        if (next < 0x80) ascii++;
        else other++;
        index++;
      }
      tokens += Math.ceil(ascii / ASCII_LETTERS_PER_TOKEN + other / OTHER_LETTERS_PER_TOKEN);
      continue;
    }
    const start = index;
    while (index < length && kindOf(text.charCodeAt(index)) === kind) index++;
    const run = index - start;
    const before = kindAt(index);
    if (kind === DIGIT) tokens += Math.ceil(run / DIGITS_PER_TOKEN);
    else if (kind === WIDE) tokens += Math.ceil(run / WIDE_CHARACTERS_PER_TOKEN);
    else if (kind === PUNCTUATION) tokens += Math.ceil((before === LETTER ? run - 1 : run) / PUNCTUATION_PER_TOKEN);
    else if (!(run === 1 && code === 32 && (before === LETTER || before === PUNCTUATION))) tokens += 1;
  }
  return tokens;
}

/**
 * Ranks tools by a budget's priority hints: the index of the first hint naming the tool (its
 * display name `namespace + name`, its Code Mode name, its bare name or its namespace), or
 * `Infinity` when no hint names it. Build once per plan; each call is a few map lookups.
 */
export function createPriorityRanker(priority: readonly string[] | undefined): (tool: ToolName) => number {
  const ranks = new Map<string, number>();
  for (const [index, hint] of (priority ?? []).entries()) if (!ranks.has(hint)) ranks.set(hint, index);
  if (ranks.size === 0) return () => Infinity;
  const rankOf = (key: string | undefined) => (key === undefined ? Infinity : (ranks.get(key) ?? Infinity));
  return (tool) =>
    Math.min(rankOf(displayName(tool)), rankOf(codeModeName(tool)), rankOf(tool.name), rankOf(tool.namespace || undefined));
}

/** How much one item costs, and the group (a namespace) it opens when it is the first of it. */
export interface BudgetCost {
  readonly cost: number;
  readonly opens?: string;
}

/** How many misses in a row end the search for items that still fit. */
const MISSES_BEFORE_STOP = 64;

/**
 * Walks `items` in order and keeps each one whose cost fits what is left of `tokens`; an item that
 * does not fit is skipped and later, smaller ones may still be kept, until 64 items in a row did
 * not fit. `costOf` sees the groups already opened (a namespace's wrapper is paid once).
 * Deterministic: the same items, costs and budget keep the same items, in order.
 */
export function selectWithinBudget<T>(items: readonly T[], tokens: number, costOf: (item: T, opened: ReadonlySet<string>) => BudgetCost): T[] {
  const kept: T[] = [];
  const opened = new Set<string>();
  let left = tokens;
  let misses = 0;
  for (const item of items) {
    if (misses >= MISSES_BEFORE_STOP || left <= 0) break;
    const { cost, opens } = costOf(item, opened);
    if (cost > left) {
      misses++;
      continue;
    }
    misses = 0;
    left -= cost;
    kept.push(item);
    if (opens !== undefined) opened.add(opens);
  }
  return kept;
}
