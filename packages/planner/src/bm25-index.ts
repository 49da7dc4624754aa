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

const WORD_CHARACTER = /[\p{L}\p{N}]/u;

function isWordCharacter(text: string, index: number, code: number): boolean {
  if (code < 0x80) return (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || (code >= 65 && code <= 90);
  // a surrogate pair is one code point: both halves test the pair
  if (code >= 0xd800 && code <= 0xdbff) return WORD_CHARACTER.test(text.slice(index, index + 2));
  if (code >= 0xdc00 && code <= 0xdfff && index > 0) return WORD_CHARACTER.test(text.slice(index - 1, index + 1));
  return WORD_CHARACTER.test(text[index]);
}

/** Splits text into lower-case words (letters and digits; `_`, `-`, `.` and spaces separate). */
export function tokenize(text: string): string[] {
  const lower = text.toLowerCase();
  const words: string[] = [];
  let start = -1;
  for (let index = 0; index <= lower.length; index++) {
    const inWord = index < lower.length && isWordCharacter(lower, index, lower.charCodeAt(index));
    if (inWord) {
      if (start === -1) start = index;
      continue;
    }
    if (start !== -1) {
      const word = lower.slice(start, index);
      if (!STOP_WORDS.has(word)) words.push(word);
      start = -1;
    }
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

/**
 * Builds a classic Okapi BM25 index (k1 = 1.2, b = 0.75; idf = ln(1 + (N − n + 0.5) / (n + 0.5)))
 * as a flat inverted index in two passes: the first maps every token to a term id and counts the
 * documents of each term, the second fills one packed postings array (documents and term
 * frequencies, grouped by term). A query scores each distinct query term once and sums; ties
 * keep document order, so results are deterministic.
 */
export function createBm25Index(texts: readonly string[]): Bm25Index {
  const count = texts.length;
  const termIds = new Map<string, number>();
  const documentFrequency: number[] = [];
  const lastDocument: number[] = [];
  const tokens: number[] = [];
  const ends = new Int32Array(count);
  for (let document = 0; document < count; document++) {
    for (const word of tokenize(texts[document])) {
      let id = termIds.get(word);
      if (id === undefined) {
        id = documentFrequency.length;
        termIds.set(word, id);
        documentFrequency.push(0);
        lastDocument.push(-1);
      }
      tokens.push(id);
      if (lastDocument[id] !== document) {
        lastDocument[id] = document;
        documentFrequency[id]++;
      }
    }
    ends[document] = tokens.length;
  }

  const termCount = documentFrequency.length;
  const offsets = new Int32Array(termCount + 1);
  for (let id = 0; id < termCount; id++) offsets[id + 1] = offsets[id] + documentFrequency[id];
  const documents = new Int32Array(offsets[termCount]);
  const frequencies = new Int32Array(offsets[termCount]);
  const cursor = offsets.slice(0, termCount);
  const slot = new Int32Array(termCount).fill(-1);
  const seenIn = new Int32Array(termCount).fill(-1);
  const norms = new Float64Array(count);
  const averageLength = count === 0 ? 0 : tokens.length / count;
  let start = 0;
  for (let document = 0; document < count; document++) {
    const end = ends[document];
    for (let position = start; position < end; position++) {
      const id = tokens[position];
      if (seenIn[id] !== document) {
        seenIn[id] = document;
        slot[id] = cursor[id]++;
        documents[slot[id]] = document;
      }
      frequencies[slot[id]]++;
    }
    // k1 · (1 − b + b · |d| / avgdl), the length normalization of the document
    norms[document] = BM25_K1 * (1 - BM25_B + (averageLength === 0 ? 0 : (BM25_B * (end - start)) / averageLength));
    start = end;
  }

  return {
    size: count,
    search(query, limit) {
      if (limit <= 0 || count === 0) return [];
      const scores = new Float64Array(count);
      const touched: number[] = [];
      for (const word of new Set(tokenize(query))) {
        const id = termIds.get(word);
        if (id === undefined) continue;
        const from = offsets[id];
        const to = offsets[id + 1];
        const matching = to - from;
        const idf = Math.log(1 + (count - matching + 0.5) / (matching + 0.5));
        for (let i = from; i < to; i++) {
          const document = documents[i];
          const frequency = frequencies[i];
          if (scores[document] === 0) touched.push(document);
          scores[document] += (idf * frequency * (BM25_K1 + 1)) / (frequency + norms[document]);
        }
      }
      touched.sort((a, b) => scores[b] - scores[a] || a - b);
      return touched.slice(0, limit).map((document) => ({ index: document, score: scores[document] }));
    },
  };
}
