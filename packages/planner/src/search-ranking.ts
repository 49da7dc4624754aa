import { RespondToModelError, codeModeName, displayName, errorMessage, toolNameSpellings, type ToolExecutor } from '@switchyard/protocol';
import type { Bm25Index } from './bm25-index';

/** One searchable tool as a host's search function sees it (in host order). */
export interface ToolSearchCandidate {
  /** The tool's display name (`weather__get_forecast`): answer with it (or with its Code Mode name). */
  readonly name: string;
  /** Its namespace (`weather__`), when it has one. */
  readonly namespace?: string;
  /** The tool's own description. */
  readonly description: string;
  /** Everything the default search indexes of it: names, descriptions, parameter names and descriptions. */
  readonly text: string;
}

/** What a host's search function is asked. */
export interface ToolSearchRequest {
  /** The query as the caller gave it, trimmed (never empty). */
  readonly query: string;
  /** The most names the answer may hold (more are dropped). */
  readonly limit: number;
  /** The tools to choose from, in host order (the same array while the tools are the same). */
  readonly tools: readonly ToolSearchCandidate[];
  /** Aborted when the call is cancelled. */
  readonly signal: AbortSignal;
}

/**
 * A host's own search (embeddings, a catalog service, …): the names of the best candidates, best
 * first. Names it does not know, repeats and names past `limit` are dropped; a tool whose exact name
 * is in the query comes first whatever it answers. A throw, a rejection or an answer that is not a
 * list of strings becomes a model-visible failure of the search (`tool_search failed: …`).
 */
export type ToolSearchFunction = (request: ToolSearchRequest) => readonly string[] | Promise<readonly string[]>;

/** How `tool_search` searches, outside a cell and inside one: the host's options. */
export interface ToolSearchSettings {
  /** Replaces the BM25 ranking (exact names still come first). Default: BM25 over the tools' search texts. */
  readonly search?: ToolSearchFunction;
  /** Results when a call gives no `limit`, and the most a call may ask for. Default 8 (no maximum). */
  readonly limit?: number;
}

/** What the ranking reads of one indexed tool. */
export interface RankedEntry {
  readonly executor: ToolExecutor;
  readonly text: string;
}

/** Names that can stand for a tool in a query or a host's answer, lower-cased: every spelling of its name and its Code Mode name. */
function namesOf(executor: ToolExecutor): string[] {
  return [...new Set([...toolNameSpellings(executor.name), codeModeName(executor.name)].map((name) => name.toLowerCase()))];
}

/** The words of a query that could be a tool's name: split at white space and commas, quotes and backticks trimmed. */
function queryNames(query: string): string[] {
  return query
    .split(/[\s,;]+/)
    .map((word) => word.replace(/^[`'"([{]+|[`'")\]}:.]+$/g, '').toLowerCase())
    .filter((word) => word !== '');
}

/**
 * Ranks the tools of one index for a query: tools whose exact name (any spelling, or the Code Mode
 * name, case-insensitive) is a word of the query first, in the query's order; then BM25, or the
 * host's search function; cut at `limit`. Built once per index; the name table on first use.
 */
export class SearchRanking {
  private names: Map<string, number> | undefined;
  private candidateList: readonly ToolSearchCandidate[] | undefined;

  constructor(
    private readonly entries: readonly RankedEntry[],
    private readonly bm25: Bm25Index,
  ) {}

  /**
   * The entry a name stands for. A spelling two tools share (the bare `search` of two namespaces)
   * names neither: it is no exact name, and BM25 ranks them.
   */
  private byName(name: string): number | undefined {
    if (this.names === undefined) {
      const names = new Map<string, number>();
      for (const [index, entry] of this.entries.entries()) {
        for (const spelling of namesOf(entry.executor)) names.set(spelling, names.has(spelling) && names.get(spelling) !== index ? -1 : index);
      }
      this.names = names;
    }
    const index = this.names.get(name.toLowerCase());
    return index === undefined || index < 0 ? undefined : index;
  }

  /** Entries named exactly by a word of the query (or the whole query), in the query's order. */
  exact(query: string): number[] {
    const found: number[] = [];
    for (const word of [query.trim().toLowerCase(), ...queryNames(query)]) {
      const index = this.byName(word);
      if (index !== undefined && !found.includes(index)) found.push(index);
    }
    return found;
  }

  /**
   * The ranked entry indexes (exact names first), at most `limit`. Synchronous with the default
   * ranking (a search answers in the same tick, as it always did); a promise with the host's.
   */
  rank(query: string, limit: number, settings: ToolSearchSettings, signal: AbortSignal): number[] | Promise<number[]> {
    const ranked = this.exact(query).slice(0, limit);
    const merge = (rest: readonly number[]) => {
      for (const index of rest) {
        if (ranked.length >= limit) break;
        if (!ranked.includes(index)) ranked.push(index);
      }
      return ranked;
    };
    if (settings.search) return this.hostRanked(query, limit, settings.search, signal).then(merge);
    return merge(this.bm25.search(query, limit).map((hit) => hit.index));
  }

  /** The host's answer as entry indexes; its failures are the search's model-visible failure. */
  private async hostRanked(query: string, limit: number, search: ToolSearchFunction, signal: AbortSignal): Promise<number[]> {
    let answer: unknown;
    try {
      answer = await search({ query, limit, tools: this.candidates(), signal });
    } catch (error) {
      throw new RespondToModelError(`tool_search failed: ${errorMessage(error)}`, { cause: error });
    }
    if (!Array.isArray(answer) || answer.some((name) => typeof name !== 'string')) {
      throw new RespondToModelError('tool_search failed: the search function did not answer with a list of tool names');
    }
    const indexes: number[] = [];
    for (const name of answer as string[]) {
      if (indexes.length >= limit) break;
      const index = this.byName(name);
      if (index !== undefined && !indexes.includes(index)) indexes.push(index);
    }
    return indexes;
  }

  /** The candidates a host's search function chooses from (made once, frozen). */
  private candidates(): readonly ToolSearchCandidate[] {
    this.candidateList ??= Object.freeze(
      this.entries.map(({ executor, text }) =>
        Object.freeze({
          name: displayName(executor.name),
          ...(executor.name.namespace ? { namespace: executor.name.namespace } : {}),
          description: executor.spec.type === 'function' || executor.spec.type === 'custom' ? executor.spec.description : '',
          text,
        }),
      ),
    );
    return this.candidateList;
  }
}
