import type { BackgroundDelivery, CellObservation, CodeModeSession, ContentItem } from '@switchyard/protocol';

/** The longest a single observation may wait (Node's timer limit); a watch without a bound renews it. */
const MAX_OBSERVE_MS = 2 ** 31 - 1;

/** What the watch of a cell hands on when it ends on its own: the cell's final observation, every item since the last model observation. */
export type FinalObservation = Exclude<CellObservation, { kind: 'yielded' }> & { unobservedLimitMs?: number };

/** One cell being watched: its observation's abort, and what the loop took from `yield_control()` observations. */
interface Watch {
  readonly controller: AbortController;
  readonly carried: ContentItem[];
  done: Promise<void>;
}

/**
 * Watches yielded cells so their completion reaches the model without `wait`: while no call of
 * the model observes a cell, the watch is its observer. A cell ends at most once, so exactly one
 * of them sees the end — the watch (which hands it to `deliver`) or a model's `wait` (which stops
 * the watch first and takes what it carried). A `wait` after the watch delivered finds the cell
 * closed ("exec cell … not found"), as any observation of an already observed completion does.
 */
export class BackgroundWatcher {
  private readonly watches = new Map<string, Watch>();

  constructor(private readonly runtime: CodeModeSession) {}

  /**
   * Starts watching `cellId` (a no-op when already watched). `deliver` receives the final
   * observation; with `background.maxUnobservedMs`, a cell still running that long after the
   * watch began is terminated and delivered as terminated. `carried`: output nobody has seen yet
   * (what a cancelled `wait` took back from an earlier watch), handed on with the end.
   */
  watch(cellId: string, background: BackgroundDelivery, deliver: (observation: FinalObservation) => void, carried: readonly ContentItem[] = []): void {
    if (this.watches.has(cellId) || background.signal.aborted) return;
    const controller = new AbortController();
    const stopWithSession = () => controller.abort();
    background.signal.addEventListener('abort', stopWithSession, { once: true });
    const watch: Watch = { controller, carried: [...carried], done: Promise.resolve() };
    this.watches.set(cellId, watch);
    watch.done = this.run(cellId, watch, background.maxUnobservedMs)
      .then((final) => {
        if (final && !background.signal.aborted) deliver(final);
      })
      .catch(() => undefined)
      .finally(() => {
        background.signal.removeEventListener('abort', stopWithSession);
        if (this.watches.get(cellId) === watch) this.watches.delete(cellId);
      });
  }

  /**
   * Stops watching `cellId` before a model's call observes it; resolves with the items the watch
   * took from `yield_control()` observations (they belong to that call's output), or none.
   */
  async stop(cellId: string): Promise<ContentItem[]> {
    const watch = this.watches.get(cellId);
    if (!watch) return [];
    this.watches.delete(cellId);
    watch.controller.abort();
    await watch.done;
    return watch.carried.splice(0);
  }

  /** Observes until the cell ends (or the bound passes); `undefined` when stopped or the cell is gone. */
  private async run(cellId: string, watch: Watch, limitMs: number | undefined): Promise<FinalObservation | undefined> {
    const deadline = limitMs === undefined ? Infinity : Date.now() + limitMs;
    const signal = watch.controller.signal;
    for (;;) {
      const yieldTimeMs = Math.max(0, Math.min(MAX_OBSERVE_MS, deadline - Date.now()));
      // rejects when stopped (the observer detaches, keeping the output) or when the cell is gone
      const observation = await this.runtime.observe(cellId, { yieldTimeMs, signal });
      if (signal.aborted && observation.kind === 'yielded') {
        watch.carried.push(...observation.items);
        return undefined;
      }
      if (observation.kind !== 'yielded') return { ...observation, items: [...watch.carried.splice(0), ...observation.items] };
      // a yield_control() with nobody waiting: keep its output for whoever sees the end
      watch.carried.push(...observation.items);
      if (Date.now() < deadline) continue;
      const terminated = await this.runtime.terminate(cellId);
      const final = { ...terminated, items: [...watch.carried.splice(0), ...terminated.items] } as FinalObservation;
      return terminated.kind === 'terminated' ? { ...final, unobservedLimitMs: limitMs } : final;
    }
  }
}
