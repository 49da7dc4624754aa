import { errorMessage, hasErrorCode, type CellResumedEvent } from '@switchyard/protocol';
import { RuntimeLostError } from './runtime-client';
import { splitStoredPairs } from './protocol';
import { encodeResult } from './runtime-server';
import { isDurable, type Binding, type HostCell, type RemoteCore } from './remote-binding';
import type { CallProxy } from './remote-calls';

/**
 * How many runtimes a cell may lose. The first loss replays it with the session's other lost
 * cells on a new runtime; the second replays it alone (quarantine: `acquire(sink, { alone: true })`),
 * and a cell whose lone runtime is lost is the culprit: it fails with the cause. So a cell is
 * replayed at most twice, never in a loop; this bound holds even for a placement that ignores `alone`.
 */
export const MAX_RUNTIME_LOSSES = 3;

/** The failure of a cell lost with its runtime: the cause, and why it could not be resumed (when it could not). */
/** Why a replay could not start: the text the cell ends with, and the error code of a restore. */
export interface ResumeFailure {
  error: string;
  code: 'INVALID_JOURNAL' | 'LIMIT_EXCEEDED';
}

export function lostText(cause: string, reason?: string): string {
  return `exec runtime ended unexpectedly: ${cause}${reason === undefined ? '' : `; the cell could not be resumed: ${reason}`}`;
}

/**
 * Crash transparency for a `RemoteSession`: when a runtime holding cells is lost (a V8 fatal, an
 * OOM kill, SIGKILL, a missed heartbeat, a link that ended), every cell that can be resumed is
 * re-run from its journal on another runtime (`resume-cell`); requests that were waiting on it
 * are asked again there (`waitFor`), and the cell goes on as if nothing happened. A cell that
 * cannot be resumed fails as before, with the reason added.
 */
export class Resumer {
  constructor(
    private readonly core: RemoteCore,
    private readonly calls: CallProxy,
    private readonly forget: (cell: HostCell, announce: boolean) => void,
  ) {}

  /** The runtime behind `binding` was lost with `cause` (once; a later call for it does nothing). */
  lost(binding: Binding, cause: string): void {
    if (binding.cause !== undefined) return;
    binding.cause = cause;
    // Given back before (idle, or the session shut down): nothing of the session is left on it.
    if (binding.lost) return;
    const cells: HostCell[] = [];
    for (const id of binding.cells) {
      const cell = this.core.cells.get(id);
      if (cell && cell.binding === binding) cells.push(cell);
    }
    const together: HostCell[] = [];
    const alone: HostCell[] = [];
    for (const cell of cells) {
      const route = this.route(binding, cell, cause);
      if (route === 'together') together.push(cell);
      else if (route === 'alone') alone.push(cell);
    }
    // Tools of resumed cells run on: their replays join them.
    this.calls.release(binding, (cell) => !together.includes(cell) && !alone.includes(cell));
    binding.cells.clear();
    this.core.drop(binding);
    this.core.safely(() => this.core.settings.host.runtimeEvent?.({ type: 'runtime-lost', cause, cellIds: cells.map((cell) => cell.id) }));
    if (this.core.closing) {
      for (const cell of [...together, ...alone]) this.fail(cell, lostText(cause));
      return;
    }
    if (together.length > 0) {
      const target = this.core.bind();
      for (const cell of together) void this.resume(cell, target, { cause, alone: false });
    }
    for (const cell of alone) void this.resume(cell, this.core.acquire(true), { cause, alone: true });
  }

  /** Whether a cell lost with `binding` is resumed (with the others, or alone), or fails now. */
  private route(binding: Binding, cell: HostCell, cause: string): 'together' | 'alone' | 'failed' {
    const { journal } = cell;
    const fail = (reason?: string) => {
      this.fail(cell, lostText(cause, reason));
      return 'failed' as const;
    };
    if (cell.terminating) {
      this.fail(cell, undefined);
      return 'failed';
    }
    // Journals off, or a runtime that keeps none (a relay that does not pass them on): as before, the cause alone.
    if (!journal || !isDurable(binding)) return fail();
    if (journal.unresumable !== undefined) return fail(journal.unresumable);
    journal.losses++;
    if (binding.alone) {
      // Its lone replay was lost too: this cell is the one that ends its runtime.
      const tenant = this.core.settings.tenant;
      if (tenant !== undefined) this.core.safely(() => this.core.settings.placement.isolateTenant?.(tenant));
      return fail();
    }
    if (journal.losses >= MAX_RUNTIME_LOSSES) return fail(`it lost ${journal.losses} runtimes`);
    return journal.losses >= 2 ? 'alone' : 'together';
  }

  /** Ends a cell that cannot go on: a request waiting on it answers `text` (none: terminated); the host hears `cellClosed`. */
  fail(cell: HostCell, text: string | undefined): void {
    cell.resuming = Promise.resolve(text ?? '');
    this.forget(cell, true);
  }

  /**
   * Re-runs `cell` from its journal on the runtime `target` resolves to (`resume-cell`, its
   * snapshot ahead in `stored` parts). `event`: a crash replay to report (`cell-resumed`); a
   * restore reports none. Resolves when the replay started (undefined), its new runtime was lost
   * (undefined: that loss decides), or it failed (the text the cell ends with, and its code).
   */
  resume(cell: HostCell, target: Promise<Binding>, event?: { cause: string; alone: boolean }): Promise<ResumeFailure | undefined> {
    let settle!: (outcome: Binding | string) => void;
    cell.resuming = new Promise((resolve) => (settle = resolve));
    const failed = (error: unknown, prefix = ''): ResumeFailure => {
      const reason = prefix + errorMessage(error).replace(`cannot resume cell ${cell.id}: `, '');
      const text = event ? lostText(event.cause, reason) : `cannot resume cell ${cell.id}: ${reason}`;
      this.fail(cell, text);
      settle(text);
      return { error: text, code: hasErrorCode(error, 'INVALID_JOURNAL') ? 'INVALID_JOURNAL' : 'LIMIT_EXCEEDED' };
    };
    return target.then(
      (binding) =>
        this.send(cell, binding, event).then(
          () => {
            settle(binding);
            return undefined;
          },
          (error: unknown) => {
            // Lost again while resuming: that loss decides (a new replay, or the cell's failure).
            if (error instanceof RuntimeLostError) {
              settle(binding);
              return undefined;
            }
            const failure = failed(error);
            // A lease that came too late (the session shut down meanwhile) or holds nothing now goes back.
            this.core.unbindIfIdle(binding);
            return failure;
          },
        ),
      (error: unknown) => failed(error, 'no runtime to resume it on: '),
    );
  }

  private async send(cell: HostCell, binding: Binding, event: { cause: string; alone: boolean } | undefined): Promise<void> {
    const journal = cell.journal!;
    if (this.core.closing) throw new Error('the session is shutting down');
    cell.binding = binding;
    binding.cells.add(cell.id);
    cell.account.calls = 0;
    cell.account.staged = [];
    cell.account.stagedBytes = 0;
    binding.creating++;
    const release = binding.lease.hold();
    try {
      const { client, key } = binding.lease;
      const { source, tools, typescript, stored, seed } = journal.creation;
      const replay = journal.replayJournal();
      const parts = splitStoredPairs(stored.map(([name, json]) => [name, json]), Math.floor(client.maxFrameBytes / 2));
      const last = parts.pop() ?? [];
      for (const part of parts) client.post({ t: 'stored', session: key, cellId: cell.id, values: part });
      const results: Array<[string, string]> = [];
      for (const call of replay.calls) if (call.result) results.push([call.id, encodeResult(call.result)]);
      await client.request({
        t: 'resume-cell',
        session: key,
        cellId: cell.id,
        source,
        tools: tools.map((tool) => ({ ...tool })),
        ...(typescript === undefined ? {} : { typescript }),
        stored: last,
        seed,
        entries: replay.entries,
        calls: replay.calls.map(({ id, tool, hash }) => ({ id, tool, hash })),
        results,
        observed: replay.observed,
        committed: replay.committed,
      });
      if (event) {
        const resumed: CellResumedEvent = { type: 'cell-resumed', cellId: cell.id, cause: event.cause, attempt: journal.losses, alone: event.alone };
        this.core.safely(() => this.core.settings.host.runtimeEvent?.(resumed));
      }
    } finally {
      release();
      binding.creating--;
    }
  }

  /**
   * Where a request that was waiting on `cell` when its runtime was lost goes now: the binding
   * the cell was resumed on, or the failure text it ended with (`''`: terminated).
   */
  async waitFor(cell: HostCell, lostOn: Binding | undefined, cause: string): Promise<Binding | string> {
    if (lostOn) this.lost(lostOn, cause);
    let seen: Promise<Binding | string> | undefined;
    for (;;) {
      const resuming = cell.resuming;
      if (resuming === undefined || resuming === seen) return lostText(cause);
      seen = resuming;
      const outcome = await resuming;
      if (typeof outcome === 'string' || !outcome.lost) return outcome;
    }
  }
}
