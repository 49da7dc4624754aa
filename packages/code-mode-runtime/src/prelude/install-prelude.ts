/**
 * The isolate side of a cell: installs the Code Mode globals (`tools`, `ALL_TOOLS`, `text`,
 * `image`, `generatedImage`, `notify`, `console`, `yield_control`, `exit`, `setTimeout`,
 * `clearTimeout`, `store`, `load`), makes the clock, randomness and the collector journaled or
 * pinned (`determinism.ts`, `journal.ts`), and returns the `control` function the runtime enters
 * through (`resolve` a tool call, fire `timers`, `sync` in a replay).
 *
 * This module runs inside the isolate only: `build-prelude.ts` bundles it (with esbuild) into the
 * closure text `cell.ts` evaluates with `context.evalClosure(CELL_PRELUDE, [post, configJson,
 * storedPairs, flow])` (see `closure.ts`). Security properties, which every part keeps:
 * - **No reachable runtime reference.** `post` (`$0`, an `ivm.Callback({ ignored: true })`) and
 *   `flow` (`$3`, a synchronous `ivm.Callback`) live in closures only, and user code is compiled
 *   separately as a module. Every message sent out is made of primitives (`bridge.ts`); every error
 *   a helper throws is a plain string, except a failed nested call (`ToolCallError`).
 * - **Primordials captured before user code** (`primordials.ts`): the prelude is evaluated before
 *   any user code runs. After that it runs no iterator (no spread, no `for…of`, no array
 *   destructuring) and no prototype method the cell could have replaced.
 * - **`.length` before flattening.** A string copied out (nested-call arguments, text / notify /
 *   image items, stored values and keys, the final error) is checked with `.length`, which never
 *   flattens a string, before anything that does (`charCodeAt`, a RegExp, a property key, the copy
 *   itself). Flattening allocates the whole string at once, and V8 cannot fail such an allocation
 *   near the heap limit gracefully: it aborts the whole process (see `value-limit.ts`).
 */
import type { ControlFunction, FlowFunction, PostFunction, PreludeConfig, StoredPair } from './bridge';
import { createSend, type Send } from './channel';
import { createOutput, type CellState } from './output';
import { createTimers } from './timers';
import { createTools } from './tools';
import { createStore } from './store';
import { define, defineValue, parse } from './primordials';
import { createJournal } from './journal';
import { installDeterminism } from './determinism';
import { describe } from './tool-error';
import { tooLargeText } from './values';

/** The sentinel `exit()` throws: settling with it counts as success. */
export const EXIT = '__codex_code_mode_exit__';

/** The text a failed cell reports: its error's stack or text, replaced when over the value size limit. */
function errorText(error: unknown, config: PreludeConfig): string {
  const text = describe(error);
  if (typeof text !== 'string') return 'unknown error';
  const { maxValueChars, heapMb } = config.limits;
  return text.length > maxValueChars ? tooLargeText('the error the cell failed with', text.length, maxValueChars, heapMb) : text;
}

/**
 * Settles the cell once: flushes the calls started in the settling run (the runtime then cancels
 * them), sends one `write` per stored write (each within the value size limit), then `done` with
 * their count; the runtime commits the writes only when the count matches.
 */
function createSettle(config: PreludeConfig, state: CellState, send: Send, writes: Record<string, string>, flushCalls: () => void) {
  return function settle(failed: boolean, error?: unknown): void {
    if (state.finished) return;
    flushCalls();
    state.finished = true;
    try {
      const failedForReal = failed && error !== EXIT;
      const text = failedForReal ? errorText(error, config) : '';
      let count = 0;
      for (const key in writes) {
        send('write', key, writes[key]);
        count++;
      }
      send('done', failedForReal ? 1 : 0, text, count);
    } catch {
      send('done', 1, 'exec cell could not report its result', -1);
    }
  };
}

/** Installs the globals on `globalThis` and returns the runtime's entry point. */
export function installPrelude(post: PostFunction, config: PreludeConfig, storedPairs: readonly StoredPair[], flow: FlowFunction): ControlFunction {
  const G = globalThis as unknown as Record<string, unknown>;
  for (const name of ['console', 'WebAssembly', 'SharedArrayBuffer', 'Atomics']) delete G[name];
  const state: CellState = { finished: false };
  const liveNow = Date.now;
  const journal = createJournal(config.replayTimes, liveNow);
  installDeterminism(G, config.seed, journal.now);
  const send = createSend(post, flow, journal.take);
  const output = createOutput(config.limits, state, send);
  const timers = createTimers(config.limits, state, send);
  const tools = createTools(config.tools, config.limits, state, send);
  const stored = createStore(storedPairs, config.limits);
  const settle = createSettle(config, state, send, stored.writes, tools.flushCalls);
  const globals: Record<string, unknown> = {
    tools: tools.toolFunctions,
    ALL_TOOLS: tools.allTools,
    text: output.text,
    image: output.image,
    generatedImage: output.generatedImage,
    notify: output.notify,
    yield_control: function yield_control() {
      if (!state.finished) send('yield');
    },
    exit: function exit() {
      throw EXIT;
    },
    setTimeout: timers.setTimeout,
    clearTimeout: timers.clearTimeout,
  };
  for (const name in globals) G[name] = globals[name];
  // Not enumerable, as the standard console it replaces.
  defineValue(G, 'console', output.console, false);
  if (config.storeEnabled) {
    G.store = stored.store;
    G.load = stored.load;
  }
  // The module wrapper (MODULE_PREFIX) takes `settle` once, before user code runs.
  define(G, '__switchyard_take', {
    configurable: true,
    value: function () {
      delete G.__switchyard_take;
      return settle;
    },
  });
  return function control(kind: string, a?: unknown, b?: unknown, c?: unknown, d?: unknown): void {
    if (state.finished) return;
    if (kind === 'resolve') {
      journal.resolved(a as string, d === 1);
      tools.settleCall(a as string, b === 1, c as string | undefined);
    } else if (kind === 'timers') {
      const ids = parse(a as string) as number[];
      journal.timers(ids, b === 1);
      timers.fire(ids, (error) => settle(true, error));
    } else if (kind === 'sync') send('synced', a as number);
  } as ControlFunction;
}
