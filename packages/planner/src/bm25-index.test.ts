import { describe, expect, it } from 'vitest';
import { BM25_B, BM25_K1, createBm25Index, tokenize } from './bm25-index';

/** Classic Okapi BM25 for one query term, written out for comparison. */
function bm25(termFrequency: number, matching: number, total: number, length: number, averageLength: number): number {
  const idf = Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
  return (idf * (termFrequency * (BM25_K1 + 1))) / (termFrequency + BM25_K1 * (1 - BM25_B + (BM25_B * length) / averageLength));
}

describe('createBm25Index', () => {
  it('scores one term exactly like Okapi BM25 (k1 = 1.2, b = 0.75)', () => {
    const [hit] = createBm25Index(['alpha beta', 'gamma']).search('alpha', 8);
    expect(hit.index).toBe(0);
    expect(hit.score).toBeCloseTo(bm25(1, 1, 2, 2, 1.5), 12);
  });

  it('counts every token in a document length, repeated ones included', () => {
    const hits = createBm25Index(['alpha alpha beta', 'alpha gamma gamma gamma']).search('alpha', 8);
    expect(hits.map((hit) => hit.index)).toEqual([0, 1]);
    expect(hits[0].score).toBeCloseTo(bm25(2, 2, 2, 3, 3.5), 12);
    expect(hits[1].score).toBeCloseTo(bm25(1, 2, 2, 4, 3.5), 12);
  });

  it('sums the scores of the query terms (no extra boost for matching several)', () => {
    const texts = ['alpha gamma', 'alpha beta beta', 'delta'];
    const [hit] = createBm25Index(texts).search('alpha gamma', 1);
    expect(hit.index).toBe(0);
    expect(hit.score).toBeCloseTo(bm25(1, 2, 3, 2, 2) + bm25(1, 1, 3, 2, 2), 12);
  });

  it('breaks ties by document order and applies the limit', () => {
    const index = createBm25Index(['same words', 'other', 'same words', 'same words']);
    expect(index.search('same', 8).map((hit) => hit.index)).toEqual([0, 2, 3]);
    expect(index.search('same', 2).map((hit) => hit.index)).toEqual([0, 2]);
    expect(index.search('same', 0)).toEqual([]);
    expect(index.size).toBe(4);
  });

  it('lower-cases, splits on punctuation and underscores, and drops English stop words', () => {
    expect(tokenize('Get_the Weather-Forecast, for Zürich!')).toEqual(['get', 'weather', 'forecast', 'zürich']);
    const index = createBm25Index(['the weather of the city', 'GET_FORECAST']);
    expect(index.search('the', 8)).toEqual([]);
    expect(index.search('forecast', 8).map((hit) => hit.index)).toEqual([1]);
  });
});

describe('tokenize', () => {
  it('keeps letters of every script, astral ones included, and splits on everything else', () => {
    expect(tokenize('Grüße, мир! 東京 𝒜lpha🙂beta x_y-z.w')).toEqual(['grüße', 'мир', '東京', '𝒜lpha', 'beta', 'x', 'y', 'z', 'w']);
    expect(tokenize('')).toEqual([]);
    expect(tokenize('___ --- the')).toEqual([]);
  });

  it('indexes a large corpus and ranks by BM25 across it', () => {
    const texts = Array.from({ length: 5_000 }, (_, index) => `tool ${index} ${index % 7 === 0 ? 'invoice' : 'order'} ${index === 4321 ? 'rare' : ''}`);
    const index = createBm25Index(texts);
    expect(index.search('rare invoice', 3)[0].index).toBe(4321);
    expect(index.search('invoice', 2).map((hit) => hit.index)).toEqual([0, 7]);
  });
});
