import { SwitchyardError, isToolCallItem, type ResponseItem, type ToolCallItem, type ToolOutputItem } from '@switchyard/protocol';

/** The output item types and the call item each answers. */
const OUTPUT_OF: Readonly<Record<string, string>> = {
  function_call: 'function_call_output',
  custom_tool_call: 'custom_tool_call_output',
  tool_search_call: 'tool_search_output',
};
const OUTPUT_TYPES = new Set(Object.values(OUTPUT_OF));

/** The id an output must carry to answer `item` (the router falls back to `id` the same way). */
function callIdOf(item: ResponseItem): string | undefined {
  const record = item as { call_id?: unknown; id?: unknown };
  if (typeof record.call_id === 'string' && record.call_id !== '') return record.call_id;
  return typeof record.id === 'string' && record.id !== '' ? record.id : undefined;
}

/** True for a call the host must answer (a server-side `tool_search_call` is answered by the provider). */
function needsOutput(item: ResponseItem): item is ToolCallItem {
  return isToolCallItem(item) && !(item.type === 'tool_search_call' && (item as { execution?: unknown }).execution !== 'client');
}

/**
 * The output that closes a call the turn could not answer: the message as the output text (an
 * empty completed search for `tool_search_call`), with the call's own `call_id`.
 */
export function closingOutput(call: ToolCallItem, message: string): ToolOutputItem {
  const callId = callIdOf(call) ?? '';
  if (call.type === 'tool_search_call') return { type: 'tool_search_output', call_id: callId, status: 'completed', execution: 'client', tools: [] };
  return { type: OUTPUT_OF[call.type] as 'function_call_output' | 'custom_tool_call_output', call_id: callId, output: message };
}

/** Calls among `items` (from index `from`) that no later item answers, in call order. */
export function unansweredCalls(items: readonly ResponseItem[], from = 0): ToolCallItem[] {
  const answered = new Set<string>();
  for (let index = from; index < items.length; index++) {
    const item = items[index];
    if (OUTPUT_TYPES.has(item.type)) answered.add(String((item as { call_id?: unknown }).call_id));
  }
  const open: ToolCallItem[] = [];
  for (let index = from; index < items.length; index++) {
    const item = items[index];
    if (needsOutput(item) && !answered.has(callIdOf(item) ?? '')) open.push(item);
  }
  return open;
}

/**
 * Checks and copies a saved conversation for `createSession({ history })`: it must be a JSON
 * array of items (objects with a string `type`), and every output must answer an earlier call.
 * A call without an output (a history saved mid-turn) is closed with an output saying so, so the
 * first request is valid. Throws a `CONFIG` error naming the item otherwise.
 */
export function restoreHistory(value: readonly ResponseItem[], close?: (call: ToolCallItem) => ToolOutputItem | undefined): ResponseItem[] {
  let items: unknown;
  try {
    items = JSON.parse(JSON.stringify(value));
  } catch (error) {
    throw new SwitchyardError('CONFIG', `createSession: option \`history\` must be JSON-serializable: ${(error as Error).message}`, { cause: error });
  }
  if (!Array.isArray(items)) throw new SwitchyardError('CONFIG', 'createSession: option `history` must be a list of items');
  const calls = new Set<string>();
  items.forEach((item: unknown, index) => {
    const type = (item as { type?: unknown } | null)?.type;
    if (typeof item !== 'object' || item === null || typeof type !== 'string') {
      throw new SwitchyardError('CONFIG', `createSession: option \`history[${index}]\` must be an item with a string \`type\``);
    }
    const record = item as ResponseItem;
    if (needsOutput(record)) {
      const id = callIdOf(record);
      if (id === undefined) throw new SwitchyardError('CONFIG', `createSession: option \`history[${index}]\` is a ${type} without a call_id`);
      calls.add(id);
    } else if (OUTPUT_TYPES.has(type) && !calls.has(String((record as { call_id?: unknown }).call_id))) {
      throw new SwitchyardError('CONFIG', `createSession: option \`history[${index}]\` answers call ${JSON.stringify((record as { call_id?: unknown }).call_id)}, which no earlier item makes`);
    }
  });
  const restored = items as ResponseItem[];
  for (const call of unansweredCalls(restored)) restored.push(close?.(call) ?? closingOutput(call, INTERRUPTED_MESSAGE));
  return restored;
}

/** What a call left open by an interrupted conversation answers. */
export const INTERRUPTED_MESSAGE = 'the conversation was interrupted before this call finished';

/**
 * The conversation of one session: an array of items kept valid for the next request. A turn that
 * fails before the model answered anything leaves no input behind; a turn that fails later keeps
 * what was recorded, every call answered, and a retry with the same input does not add it again.
 */
export class SessionHistory {
  readonly items: ResponseItem[];
  /** A failed turn whose input stayed in the history: a retry with the same input resumes it. */
  private resumable?: { inputJson: string; length: number };
  /** Items a store holds (the first `saved`), and the lowest index changed since they were taken. */
  private saved = 0;
  private changedFrom = Infinity;
  /**
   * The model items of the response being streamed, once one of its calls started (the response is
   * final then: a step with a started call is never sampled again). A store commit includes them, so
   * a call's item is durable before the call runs; `pushModelItems` records them for good.
   */
  provisional: readonly ResponseItem[] | undefined;

  /**
   * `close` answers calls the saved conversation left open (default: "the conversation was
   * interrupted…"); `saved`: how many of `initial` a store already holds.
   */
  constructor(initial: readonly ResponseItem[] = [], options: { close?: (call: ToolCallItem) => ToolOutputItem | undefined; saved?: number } = {}) {
    this.items = initial.length > 0 ? restoreHistory(initial, options.close) : [];
    this.saved = Math.min(options.saved ?? 0, initial.length);
  }

  /**
   * Replaces the conversation in place (a session resumed from a store or an export): the same
   * checks and closing outputs as the constructor; `saved` of them are already in the store.
   */
  replace(items: readonly ResponseItem[], options: { close?: (call: ToolCallItem) => ToolOutputItem | undefined; saved?: number } = {}): void {
    const restored = items.length > 0 ? restoreHistory(items, options.close) : [];
    this.items.splice(0, this.items.length, ...restored);
    this.saved = Math.min(options.saved ?? 0, items.length);
    this.changedFrom = Infinity;
    this.resumable = undefined;
  }

  /**
   * What changed since the last successful save, for a store commit (keep the first `keep` items,
   * append `append`), or `undefined`. Call `settle(true)` once it is durable, `settle(false)` when
   * the commit failed (the next call gives the same changes again, and any made since).
   */
  takeChanges(): { keep: number; append: ResponseItem[]; settle(saved: boolean): void } | undefined {
    const all = this.provisional ? [...this.items, ...this.provisional] : this.items;
    const keep = Math.min(this.saved, this.changedFrom, all.length);
    if (keep === this.saved && keep === all.length) return undefined;
    const taken = this.changedFrom;
    this.changedFrom = Infinity;
    const length = all.length;
    return {
      keep,
      append: all.slice(keep),
      settle: (saved) => {
        if (saved) this.saved = length;
        else this.changedFrom = Math.min(this.changedFrom, taken, keep);
      },
    };
  }

  /** Starts a turn's record; appends the input unless it retries the failed turn that ends the history. */
  begin(input: readonly ResponseItem[]): TurnRecord {
    const inputJson = JSON.stringify(input);
    const resumes = this.resumable?.inputJson === inputJson && this.resumable.length === this.items.length;
    this.resumable = undefined;
    const start = this.items.length;
    if (!resumes) this.items.push(...input);
    return { start, input: resumes ? [] : input, inputJson, modelItems: resumes ? 1 : 0 };
  }

  /** Appends items (model output, tool outputs, injections). */
  push(...items: readonly ResponseItem[]): void {
    this.items.push(...items);
  }

  /** Appends model items and counts them for the turn. */
  pushModelItems(record: TurnRecord, items: readonly ResponseItem[]): void {
    this.provisional = undefined;
    this.items.push(...items);
    record.modelItems += items.length;
  }

  /**
   * Ends a failed turn: answers every call it left open with `message`, then drops its input when
   * the model answered nothing (history as before the turn, injections kept), or remembers it so a
   * retry with the same input resumes instead of repeating it.
   */
  fail(record: TurnRecord, message: string): void {
    for (const call of unansweredCalls(this.items, record.start)) this.items.push(closingOutput(call, message));
    if (record.modelItems === 0) {
      this.changedFrom = Math.min(this.changedFrom, record.start);
      this.items.splice(record.start, record.input.length);
      return;
    }
    this.resumable = { inputJson: record.inputJson, length: this.items.length };
  }
}

/** One turn's place in the history. */
export interface TurnRecord {
  /** Index of the turn's first item. */
  readonly start: number;
  /** The input items this turn appended (none when it resumes a failed turn). */
  readonly input: readonly ResponseItem[];
  readonly inputJson: string;
  /** Model items recorded so far (a resumed turn counts its earlier ones as one). */
  modelItems: number;
}
