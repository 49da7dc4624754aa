/**
 * The reference for the tool_search index build: the planner's previous index, BM25 through
 * MiniSearch configured to score like classic Okapi BM25 (d = 0; each token carries its position
 * so MiniSearch's distinct-token field length is the real length; the per-term multiplier is
 * divided out), over the same tokenizer. Kept here only to be measured beside the current index.
 */
import MiniSearch from 'minisearch';
import { toolSearchText } from '../../../packages/planner/src/tool-search';
import type { ToolExecutor } from '@switchyard/protocol';

const POSITION = '\u0001';
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by for from has have if in into is it its no not of on or such that the their then there ' +
    'these they this to was were will with you your can do does how i me my we what when which who'
  ).split(' '),
);

function tokenize(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '' && !STOP_WORDS.has(word));
}

/** Builds the MiniSearch index of the deferred function tools (search texts computed as the planner does). */
export function buildMiniSearchIndex(deferred: readonly ToolExecutor[]): { search(query: string, limit: number): number[] } {
  const texts = deferred.filter((tool) => tool.spec.type === 'function').map((tool) => toolSearchText(tool));
  const index = new MiniSearch<{ id: number; text: string }>({
    fields: ['text'],
    idField: 'id',
    tokenize: (text) => tokenize(text).map((word, position) => `${word}${POSITION}${position}`),
    processTerm: (term) => {
      const cut = term.indexOf(POSITION);
      return cut === -1 ? term : term.slice(0, cut);
    },
    searchOptions: { tokenize, processTerm: (term) => term, combineWith: 'OR', bm25: { k: 1.2, b: 0.75, d: 0 } },
  });
  index.addAll(texts.map((text, id) => ({ id, text })));
  return {
    search(query, limit) {
      const hits = index.search(query).map((result) => ({ id: result.id as number, score: result.score / Math.max(1, result.queryTerms.length) }));
      hits.sort((a, b) => b.score - a.score || a.id - b.id);
      return hits.slice(0, limit).map((hit) => hit.id);
    },
  };
}
