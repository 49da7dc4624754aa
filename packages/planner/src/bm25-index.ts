import MiniSearch from 'minisearch';

/** Okapi BM25 parameters (the usual k1 = 1.2, b = 0.75; upstream's `bm25` crate uses the same). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Common English words dropped from documents and queries (they match nearly every tool). */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by for from has have if in into is it its no not of on or such that the their then there ' +
    'these they this to was were will with you your can do does how i me my we what when which who'
  ).split(' '),
);

/** Splits text into lower-case words (letters and digits; `_`, `-`, `.` and spaces separate). */
export function tokenize(text: string): string[] {
  const words: string[] = [];
  for (const word of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (word !== '' && !STOP_WORDS.has(word)) words.push(word);
  }
  return words;
}

/** One ranked document: its position in the indexed list and its BM25 score. */
export interface Bm25Hit {
  readonly index: number;
  readonly score: number;
}

/** A BM25 index over a fixed list of texts. */
export interface Bm25Index {
  /** How many documents are indexed. */
  readonly size: number;
  /** The best `limit` documents for `query`, highest score first, ties in document order. */
  search(query: string, limit: number): Bm25Hit[];
}

const POSITION = '\u0001';

/**
 * Builds an Okapi BM25 index with MiniSearch, configured to score exactly like classic BM25:
 * - `d: 0` turns MiniSearch's BM25+ into plain BM25, with k1 = 1.2 and b = 0.75;
 * - MiniSearch measures a field's length in *distinct* tokens; BM25 counts every token, so each
 *   indexed token carries its position (`word\u0001n`, all distinct) and `processTerm` strips it;
 * - MiniSearch multiplies a score by the number of matched query terms; we divide it back out;
 * - ties are broken by document order, so results are deterministic.
 */
export function createBm25Index(texts: readonly string[]): Bm25Index {
  const index = new MiniSearch<{ id: number; text: string }>({
    fields: ['text'],
    idField: 'id',
    tokenize: (text) => tokenize(text).map((word, position) => `${word}${POSITION}${position}`),
    processTerm: (term) => {
      const cut = term.indexOf(POSITION);
      return cut === -1 ? term : term.slice(0, cut);
    },
    searchOptions: {
      tokenize,
      processTerm: (term) => term,
      combineWith: 'OR',
      bm25: { k: BM25_K1, b: BM25_B, d: 0 },
    },
  });
  index.addAll(texts.map((text, id) => ({ id, text })));
  return {
    size: texts.length,
    search(query, limit) {
      if (limit <= 0 || texts.length === 0) return [];
      const hits = index.search(query).map((result) => ({
        index: result.id as number,
        score: result.score / Math.max(1, result.queryTerms.length),
      }));
      hits.sort((a, b) => b.score - a.score || a.index - b.index);
      return hits.slice(0, limit);
    },
  };
}
