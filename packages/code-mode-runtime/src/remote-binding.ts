import type { CellJournalUpdate, CellObservation } from '@switchyard/protocol';
import { DURABLE_CELLS_CAPABILITY } from './protocol';
import { TurnQueue } from './turn-queue';
import { ReplyCache } from './reply-cache';
import { hostLimits, newAccount, StoredValues, type CellAccount, type HostLimits } from './host-limits';
import { limitOf } from './cell-limits';
import type { CellJournal } from './journal/cell-journal';
import { newSessionId } from './journal/state';
import type { RuntimeEventMessage } from './runtime-client';
import type { RemoteSessionSettings, RuntimeLease } from './remote-session';
import type { RunningCall } from './remote-calls';

/**
 * What a `RemoteSession` holds, shared by its parts (`remote-session.ts` the contract,
 * `remote-calls.ts` the call proxy, `remote-events.ts` what the runtime sends, `remote-replay.ts`
 * the crash replay): the session's leases on runtimes (bindings), its cells, and their journals.
 */

/** One lease on a runtime connection and what this session has there. */
export interface Binding {
  lease: RuntimeLease;
  /** Cells of this session living on this connection (ids), and creations still in flight. */
  cells: Set<string>;
  creating: number;
  lost: boolean;
  /** Bytes of commit parts staged across the binding's cells. */
  stagedBytes: number;
  /** Nested calls the runtime has in flight here: its call number → the running call it waits for. */
  calls: Map<number, RunningCall>;
  /** The highest call number this binding has seen: a runtime numbers its calls upward per connection. */
  lastCall: number;
  /** The host work of this binding's calls, in slices per event-loop turn. */
  work: TurnQueue;
  /** Keyed requests in flight or kept for a retry: the binding stays while any is. */
  retained: number;
  /** Why the runtime was lost (set when it was, not when the binding was given back). */
  cause?: string;
  /** Acquired alone: a quarantine replay of one cell on a runtime no other session uses. */
  alone: boolean;
}

/** One cell of the session, wherever it runs. */
export interface HostCell {
  readonly id: string;
  /** Where it runs (unset only while a restored cell's first replay is being placed: see `resuming`). */
  binding: Binding;
  /** Its journal (absent: journals are off, `maxJournalBytes: 0`). */
  journal?: CellJournal;
  /** What the host counts of it (calls in flight, notify bytes, staged writes, a broken limit). */
  account: CellAccount;
  /** A terminate was asked: a lost runtime ends the cell instead of resuming it. */
  terminating: boolean;
  /**
   * Set while the cell is being replayed after its runtime was lost: settles with the binding it
   * runs on then (lost again, possibly: wait on the next `resuming`), or with the failure text
   * when it could not be resumed.
   */
  resuming?: Promise<Binding | string>;
}

/** A keyed `createCell` / `observe`: where its retries go. */
export interface KeyedRequest {
  /** Its key in `RemoteCore.keyed`. */
  key: string;
  cellId: string;
  binding: Binding;
  /** A creation's source (a retry must repeat it). */
  source?: string;
  /** The creation was sent once (later sends are retries). */
  sent?: boolean;
  /** Set while the request, cancelled here, keeps its binding for a retry. */
  timer?: NodeJS.Timeout;
  /** The answer the request got here: a retry repeats it without asking the runtime. */
  answer?: CellObservation;
}

/** What a `RemoteSession` holds. */
export class RemoteCore {
  /** The limits this host enforces on what the runtime sends. */
  readonly limits: HostLimits;
  /** Committed stored values: key → JSON text, within the session's budget. */
  readonly stored: StoredValues;
  readonly cells = new Map<string, HostCell>();
  /** Cells whose runtime broke a host limit: their completion fails with it. */
  readonly failures = new Map<string, string>();
  /** Keyed creations and observations: where their retries go (the most recent `maxCells` + 8). */
  readonly keyed: ReplyCache<KeyedRequest>;
  /** The session's identity in its exported state. */
  id = newSessionId();
  /** The binding new cells go to. */
  binding: Binding | undefined;
  binding$: Promise<Binding> | undefined;
  closing = false;

  constructor(readonly settings: RemoteSessionSettings) {
    this.limits = hostLimits(settings.engine);
    this.stored = new StoredValues(this.limits);
    this.keyed = new ReplyCache(settings.engine.maxCells + 8);
  }

  /** The byte budget of a journal; 0: journals are off. */
  get maxJournalBytes(): number {
    return limitOf(this.settings.engine, 'maxJournalBytes');
  }

  /** Reports a journal update to the host (`CellHost.journal`); undefined when the host takes none. */
  get report(): ((update: CellJournalUpdate) => void | Promise<void>) | undefined {
    const host = this.settings.host;
    return host.journal ? (update) => host.journal?.(update) : undefined;
  }

  /** A new binding for `lease`. */
  newBinding(lease: RuntimeLease, alone = false): Binding {
    return { lease, cells: new Set(), creating: 0, lost: false, stagedBytes: 0, calls: new Map(), lastCall: 0, work: new TurnQueue(), retained: 0, alone };
  }

  /** Registers a cell on `binding` (none yet: a restored cell, placed by its replay). */
  addCell(id: string, binding: Binding | undefined, journal: CellJournal | undefined): HostCell {
    const cell: HostCell = { id, binding: binding as Binding, journal, account: newAccount(), terminating: false };
    this.cells.set(id, cell);
    binding?.cells.add(id);
    return cell;
  }

  /** Set by the session: what its bindings' runtimes send, and their loss. */
  onEvent!: (binding: Binding, message: RuntimeEventMessage) => void;
  onLost!: (binding: Binding, cause: string) => void;
  /** Set by the session: the nested calls still running for a binding given back are aborted. */
  dropCalls!: (binding: Binding) => void;

  /** The binding new cells go to: the current one, or a fresh lease (one acquisition at a time). */
  bind(): Promise<Binding> {
    if (this.binding && !this.binding.lost) return Promise.resolve(this.binding);
    this.binding$ ??= this.acquire(false)
      .then((binding) => {
        this.binding = binding;
        return binding;
      })
      .finally(() => {
        this.binding$ = undefined;
      });
    return this.binding$;
  }

  /**
   * A new lease from the placement, its session opened there (pipelined: the runtime handles it
   * before the request that follows). `alone`: a runtime no other session uses while it lives.
   * A placement may report the connection lost after its handshake but before `acquire` resolved:
   * the binding has no cells then, so the acquisition fails with that cause.
   */
  async acquire(alone: boolean): Promise<Binding> {
    let binding: Binding | undefined;
    const { sink, lostEarly } = bindingSink(() => binding, (target, message) => this.onEvent(target, message), (target, cause) => this.onLost(target, cause));
    const { tenant, placement, engine } = this.settings;
    const options = tenant === undefined && !alone ? undefined : { ...(tenant === undefined ? {} : { tenant }), ...(alone ? { alone } : {}) };
    const lease = await placement.acquire(sink, options);
    const early = lostEarly();
    if (early !== undefined) {
      lease.release();
      throw new Error(`exec runtime failed to start: ${early}`);
    }
    binding = this.newBinding(lease, alone);
    lease.client.request({ t: 'open-session', session: lease.key, options: engine }).catch(() => undefined);
    return binding;
  }

  /** A binding without cells gives its connection back (closing its session there). */
  unbindIfIdle(binding: Binding): void {
    if (binding.cells.size > 0 || binding.creating > 0 || binding.retained > 0 || binding.lost) return;
    if (!binding.lease.client.ended) binding.lease.client.request({ t: 'close-session', session: binding.lease.key }).catch(() => undefined);
    this.drop(binding);
  }

  /** Gives the binding's lease back; the nested calls it still waits for are aborted. */
  drop(binding: Binding): void {
    if (this.binding === binding) this.binding = undefined;
    this.dropCalls(binding);
    binding.lost = true;
    binding.lease.release();
  }

  safely(task: () => void): void {
    try {
      task();
    } catch {
      // a broken host never harms the session
    }
  }
}

/** Whether the runtime behind `binding` journals and resumes cells (its hello says so). */
export function isDurable(binding: Binding): boolean {
  return binding.lease.client.hello?.capabilities?.includes(DURABLE_CELLS_CAPABILITY) === true;
}

/** What a placement delivers to a binding before its lease is known (a loss is only remembered then). */
export function bindingSink(target: () => Binding | undefined, onEvent: (binding: Binding, message: RuntimeEventMessage) => void, onLost: (binding: Binding, cause: string) => void) {
  let lostEarly: string | undefined;
  return {
    sink: {
      onEvent: (message: RuntimeEventMessage) => {
        const binding = target();
        if (binding) onEvent(binding, message);
      },
      onLost: (cause: string) => {
        const binding = target();
        if (binding) onLost(binding, cause);
        else lostEarly ??= cause;
      },
    },
    lostEarly: () => lostEarly,
  };
}

