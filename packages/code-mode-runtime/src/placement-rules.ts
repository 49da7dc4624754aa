import type { AdmissionTicket } from './admission-queue';

/**
 * Which worker may take which session: the rules of the pool's placement, as pure functions over
 * what the pool knows of its workers, so that they read (and are tested) apart from processes.
 */

/** A session asking for a place. */
export interface PlacementTicket extends AdmissionTicket {
  readonly tenant: string;
  /** A lone lease: a worker no other session uses while it lives. */
  readonly alone: boolean;
}

/** What placement reads of a worker. */
export interface PlacedWorker {
  readonly id: number;
  readonly leases: { readonly size: number };
  /** Sessions on it, per tenant. */
  readonly tenants: ReadonlyMap<string, number>;
  /** `perSession`: the tenant it serves (or served last); undefined while it never served one. */
  tenant?: string;
  /** Held by a lone lease: nobody else is placed on it. */
  alone: boolean;
  /** Being emptied for this waiting session: nobody else is placed on it. */
  drainingFor?: PlacementTicket;
}

/** The settings placement reads. */
export interface PlacementSettings {
  max: number;
  sessionsPerWorker: number;
  perSession: boolean;
}

/**
 * Whether `worker` may take `ticket` now: no lone lease holds it and no session waits for it to
 * empty; a lone lease needs it empty; under `perSession` it serves the ticket's tenant or none yet
 * (a tenant's sessions share its process without bound); otherwise it has room
 * (`sessionsPerWorker`) and holds no session of another tenant when either the ticket's tenant or
 * a tenant on it is isolated.
 */
export function accepts(worker: PlacedWorker, ticket: PlacementTicket, settings: PlacementSettings, isolated: (tenant: string) => boolean): boolean {
  if (worker.alone) return false;
  if (worker.drainingFor !== undefined && worker.drainingFor !== ticket) return false;
  const sessions = worker.leases.size;
  // Under perSession a tenant's sessions share its one process, however many they are.
  if (sessions >= settings.sessionsPerWorker && !settings.perSession) return false;
  if (settings.perSession && worker.tenant !== undefined && worker.tenant !== ticket.tenant) return false;
  if (ticket.alone) return sessions === 0;
  if (settings.perSession) return true;
  // empty, or holding only this tenant's sessions
  if (sessions === (worker.tenants.get(ticket.tenant) ?? 0)) return true;
  if (isolated(ticket.tenant)) return false;
  for (const tenant of worker.tenants.keys()) if (isolated(tenant)) return false;
  return true;
}

/** Among workers that accept the ticket: one already holding its tenant's sessions, else the fullest (sessions pack, so idle workers can end), else the oldest. */
export function preferred<W extends PlacedWorker>(candidates: readonly W[], ticket: PlacementTicket): W {
  const rank = (worker: W) => [worker.tenants.has(ticket.tenant) ? 1 : 0, worker.leases.size, -worker.id] as const;
  return candidates.reduce((best, worker) => {
    const [a, b] = [rank(worker), rank(best)];
    return a[0] !== b[0] ? (a[0] > b[0] ? worker : best) : a[1] !== b[1] ? (a[1] > b[1] ? worker : best) : a[2] > b[2] ? worker : best;
  });
}

/**
 * The session to empty a worker for, and that worker: the first waiting session that only an
 * empty worker can take — an isolated tenant's, or any under `perSession` — and the worker with
 * the fewest sessions (none of them a lone lease). Lone leases are not drained for: they may start
 * workers beyond `max`, and each of those frees up when its lease ends.
 */
export function drainTarget<W extends PlacedWorker>(
  live: readonly W[],
  waiting: readonly PlacementTicket[],
  settings: PlacementSettings,
  isolated: (tenant: string) => boolean,
): { ticket: PlacementTicket; worker: W } | undefined {
  const ticket = waiting.find((candidate) => !candidate.alone && (settings.perSession || isolated(candidate.tenant)));
  const workers = live.filter((worker) => !worker.alone && worker.leases.size > 0);
  if (!ticket || workers.length === 0) return undefined;
  return { ticket, worker: workers.reduce((best, worker) => (worker.leases.size < best.leases.size ? worker : best)) };
}

/** How many workers beyond `max` lone leases may start (each ends with its lease): max(2, ⌈max / 4⌉). */
export function aloneOverflow(max: number): number {
  return Math.max(2, Math.ceil(max / 4));
}

/** How the pool stands, for the admission queue's refusal texts: "the pool's 8 places (…) are held by 8 sessions". */
export function describePool(live: readonly PlacedWorker[], settings: PlacementSettings): string {
  const sessions = live.reduce((sum, worker) => sum + worker.leases.size, 0);
  if (settings.perSession) {
    const tenants = new Set(live.flatMap((worker) => [...worker.tenants.keys()])).size;
    const workers = `the pool's ${count(live.length, 'worker')} (workers.max ${settings.max}, one tenant per worker: workers.perSession)`;
    return `${workers} ${live.length === 1 ? 'is' : 'are'} held by ${count(sessions, 'session')} of ${count(tenants, 'tenant')}`;
  }
  const places = settings.max * settings.sessionsPerWorker;
  return `the pool's ${count(places, 'place')} (workers.max ${settings.max} × workers.sessionsPerWorker ${settings.sessionsPerWorker}) ${places === 1 ? 'is' : 'are'} held by ${count(sessions, 'session')}`;
}

/** "1 session", "2 sessions". */
export const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
