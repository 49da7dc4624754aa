import { SwitchyardError, type RuntimeAdmittedEvent, type RuntimeQueuedEvent, type RuntimeRefusedEvent } from '@switchyard/protocol';
import { count } from './placement-rules';

/** What the queue reports to a waiting session's host. */
export type AdmissionEvent = RuntimeQueuedEvent | RuntimeAdmittedEvent | RuntimeRefusedEvent;

/** The queue's bounds (`workers.maxQueued`, `workers.admissionMs`). */
export interface AdmissionBounds {
  /** Most sessions waiting at once; one more is refused at once (`queue-full`). */
  maxQueued: number;
  /** Longest a session waits (ms); then it is refused (`wait-timeout`). */
  admissionMs: number;
}

/** One session waiting for a place. */
export interface AdmissionTicket {
  readonly tenant: string;
  /** Served before every other ticket, first come first served among themselves (lone leases of quarantine replays). */
  readonly urgent: boolean;
  /** Where the session's host hears that it waits, got its place, or was refused. */
  readonly report?: (event: AdmissionEvent) => void;
}

interface Entry<T extends AdmissionTicket, P> {
  readonly ticket: T;
  readonly since: number;
  timer?: NodeJS.Timeout;
  resolve(place: P): void;
  reject(error: Error): void;
}

/** How often a waiting session hears its position (ms). */
export const QUEUE_REPORT_MS = 1_000;

/**
 * Sessions waiting for a place on a worker, served fairly: urgent tickets first, then round robin
 * across tenants (the tenant served goes to the back of the rotation; a new tenant joins at the
 * back) and first come first served within a tenant, so one tenant opening many sessions delays
 * another tenant's session by at most one place per tenant ahead of it. Bounded in length and in
 * wait; the only failure a session sees is at a bound, with a text that names the bound's option.
 */
export class AdmissionQueue<T extends AdmissionTicket, P> {
  private readonly urgent: Array<Entry<T, P>> = [];
  /** Tenants in rotation order, each with its tickets in arrival order. */
  private readonly rotation = new Map<string, Array<Entry<T, P>>>();
  private count = 0;
  private reporter: NodeJS.Timeout | undefined;

  /** `describe()` says how the pool stands ("12 sessions hold the pool's 1 workers (…)"), for the refusal texts. */
  constructor(
    private readonly bounds: AdmissionBounds,
    private readonly describe: () => string,
  ) {}

  /** Sessions waiting. */
  get size(): number {
    return this.count;
  }

  /**
   * Waits until {@link admit} hands the ticket a place. Rejects with a model-visible
   * `RESPOND_TO_MODEL` error when the queue is full or the wait passes `admissionMs`.
   */
  wait(ticket: T): Promise<P> {
    if (this.count >= this.bounds.maxQueued) {
      const message = `no Code Mode worker is free and ${count(this.count, 'session')} already ${this.count === 1 ? 'waits' : 'wait'} for one: ${this.describe()}; the queue holds at most ${count(this.bounds.maxQueued, 'session')} (workers.maxQueued)`;
      safely(() => ticket.report?.({ type: 'runtime-refused', reason: 'queue-full', message, waitedMs: 0 }));
      return Promise.reject(new SwitchyardError('RESPOND_TO_MODEL', message));
    }
    return new Promise<P>((resolve, reject) => {
      const entry: Entry<T, P> = { ticket, since: Date.now(), resolve, reject };
      this.add(entry);
      entry.timer = setTimeout(() => this.timeOut(entry), this.bounds.admissionMs);
      safely(() => ticket.report?.({ type: 'runtime-queued', position: this.positionOf(entry), waiting: this.count, waitedMs: 0 }));
      this.reporter ??= setInterval(() => this.reportAll(), QUEUE_REPORT_MS);
      this.reporter.unref();
    });
  }

  /**
   * Offers places in fair order: `place(ticket)` gives the ticket a place (and takes it) or
   * returns undefined when none fits it now; a tenant whose first ticket does not fit is passed
   * over this time (its later tickets need the same), never reordered.
   */
  admit(place: (ticket: T) => P | undefined): void {
    while (this.urgent.length > 0) {
      const placed = place(this.urgent[0]!.ticket);
      if (placed === undefined) break;
      this.settle(this.urgent.shift()!, placed);
    }
    let progress = true;
    while (progress && this.rotation.size > 0) {
      progress = false;
      for (const [tenant, entries] of [...this.rotation]) {
        const placed = place(entries[0]!.ticket);
        if (placed === undefined) continue;
        const entry = entries.shift()!;
        this.rotation.delete(tenant);
        if (entries.length > 0) this.rotation.set(tenant, entries);
        this.settle(entry, placed);
        progress = true;
      }
    }
  }

  /** The waiting tickets in the order they would be served. */
  order(): T[] {
    return this.served().map((entry) => entry.ticket);
  }

  /** Refuses every waiting ticket with `error` (shutdown). */
  refuseAll(error: Error): void {
    const all = this.served();
    this.urgent.length = 0;
    this.rotation.clear();
    for (const entry of all) if (this.remove(entry, false)) entry.reject(error);
    this.stopReporting();
  }

  private add(entry: Entry<T, P>): void {
    this.count++;
    if (entry.ticket.urgent) return void this.urgent.push(entry);
    const entries = this.rotation.get(entry.ticket.tenant);
    if (entries) entries.push(entry);
    else this.rotation.set(entry.ticket.tenant, [entry]);
  }

  /** Takes the entry out (true when it was still waiting). */
  private remove(entry: Entry<T, P>, fromLists = true): boolean {
    if (entry.timer === undefined) return false;
    clearTimeout(entry.timer);
    entry.timer = undefined;
    this.count--;
    if (fromLists) {
      const list = entry.ticket.urgent ? this.urgent : this.rotation.get(entry.ticket.tenant);
      const index = list?.indexOf(entry) ?? -1;
      if (index >= 0) list!.splice(index, 1);
      if (!entry.ticket.urgent && list?.length === 0) this.rotation.delete(entry.ticket.tenant);
    }
    if (this.count === 0) this.stopReporting();
    return true;
  }

  private settle(entry: Entry<T, P>, placed: P): void {
    this.remove(entry, false);
    safely(() => entry.ticket.report?.({ type: 'runtime-admitted', waitedMs: Date.now() - entry.since }));
    entry.resolve(placed);
  }

  private timeOut(entry: Entry<T, P>): void {
    this.remove(entry);
    const waitedMs = Date.now() - entry.since;
    const others = this.count === 0 ? 'no other session waits' : `${count(this.count, 'other session')} ${this.count === 1 ? 'waits' : 'wait'}`;
    const message = `no Code Mode worker became free within ${this.bounds.admissionMs} ms (workers.admissionMs): ${this.describe()}, and ${others}`;
    safely(() => entry.ticket.report?.({ type: 'runtime-refused', reason: 'wait-timeout', message, waitedMs }));
    entry.reject(new SwitchyardError('RESPOND_TO_MODEL', message));
  }

  /** Every waiting entry in serving order: urgent ones, then rounds across the rotation (one per tenant per round). */
  private served(): Array<Entry<T, P>> {
    const order = [...this.urgent];
    let active = [...this.rotation.values()];
    for (let round = 0; active.length > 0; round++) {
      for (const entries of active) order.push(entries[round]!);
      active = active.filter((entries) => entries.length > round + 1);
    }
    return order;
  }

  private positionOf(target: Entry<T, P>): number {
    if (target.ticket.urgent) return this.urgent.indexOf(target) + 1;
    const own = this.rotation.get(target.ticket.tenant)!;
    const round = own.indexOf(target);
    let position = this.urgent.length + round + 1;
    let before = true;
    for (const [tenant, entries] of this.rotation) {
      if (tenant === target.ticket.tenant) before = false;
      else position += Math.min(entries.length, before ? round + 1 : round);
    }
    return position;
  }

  private reportAll(): void {
    const now = Date.now();
    const order = this.served();
    order.forEach((entry, index) => {
      safely(() => entry.ticket.report?.({ type: 'runtime-queued', position: index + 1, waiting: order.length, waitedMs: now - entry.since }));
    });
  }

  private stopReporting(): void {
    if (this.reporter) clearInterval(this.reporter);
    this.reporter = undefined;
  }
}

/** A host's throwing listener never reaches the queue. */
function safely(task: () => void): void {
  try {
    task();
  } catch {
    // the host's problem, reported nowhere else
  }
}
