import { SwitchyardError } from '@switchyard/protocol';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Link, Placed } from './agent-link';
import { isToken } from './connection';
import type { AgentSettings } from './options';
import { deriveKeys, ephemeral, signed, verified, type Ephemeral, type PlacementKeys } from './seal';
import { PLACEMENT_VERSION, randomToken, replyText, requestText, type PlacementReply, type PlacementRequest, type Subjects } from './subjects';

/** What placing a session needs of the agent host. */
export interface PlacementOwner {
  /** Whether the agent host is shutting down (placement then stops asking). */
  closing(): boolean;
  /** Why the runtime host `runtime` (or one signing with `key`) is left out of placement now, if it is. */
  excludedHost(runtime: string, key: string | undefined): string | undefined;
  /** Opens the session's own connection to the runtime host that accepted it. */
  open(nc: NatsConnection, placed: Placed, keys: PlacementKeys | undefined): Link;
}

/** Asks the queue group for a runtime host and opens the session's own connection to it. */
export async function place(nc: NatsConnection, settings: AgentSettings, names: Subjects, owner: PlacementOwner): Promise<Link> {
  const { agentId, attempts, timeoutMs } = settings;
  const subject = names.place(agentId);
  const reasons: string[] = [];
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (owner.closing()) throw new SwitchyardError('SHUTTING_DOWN', 'code mode runtime is shutting down');
    const { request, own } = placementRequest(settings);
    let reply: PlacementReply;
    try {
      const msg = await nc.request(subject, JSON.stringify(request), { timeout: timeoutMs });
      reply = JSON.parse(msg.string()) as PlacementReply;
    } catch (error) {
      const text = describeRequestError(error, subject, timeoutMs);
      reasons.push(text);
      if (/permissions violation/i.test(text)) break;
      // No runtime host subscribed yet (starting, or all gone): wait a little before asking again.
      if (/no runtime host/.test(text)) await delay(Math.min(1_000, 100 * attempt));
      continue;
    }
    const accepted = acceptedPlacement(settings, owner, request, own, reply);
    if (typeof accepted === 'string') {
      reasons.push(accepted);
      continue;
    }
    return owner.open(nc, { runtime: reply.runtime, name: String(reply.name).slice(0, 128), key: reply.ok ? reply.key : undefined, conn: request.conn }, accepted.keys);
  }
  const distinct = [...new Set(reasons)];
  throw new Error(`exec runtime failed to start: no runtime host accepted the session after ${attempts} placement request(s) on ${subject} (${distinct.join('; ')})`);
}

/** A fresh placement request: a new connection id and, sealed, a new ephemeral key signed with this host's NKey. */
function placementRequest(settings: AgentSettings): { request: PlacementRequest; own?: Ephemeral } {
  const base: PlacementRequest = { v: PLACEMENT_VERSION, conn: randomToken(), heartbeatMs: settings.intervalMs };
  if (!settings.sealing) return { request: base };
  const own = ephemeral();
  const request = { ...base, key: settings.identity.publicKey, eph: own.public };
  return { request: { ...request, sig: signed(settings.identity, requestText(settings.agentId, request)) }, own };
}

/** The keys of an accepted placement, or why the reply is refused (a decline, a malformed or unsigned reply, an untrusted key). */
function acceptedPlacement(
  settings: AgentSettings,
  owner: PlacementOwner,
  request: PlacementRequest,
  own: Ephemeral | undefined,
  reply: PlacementReply,
): { keys?: PlacementKeys } | string {
  const malformed = 'a runtime host answered placement with a malformed reply';
  if (!reply || reply.v !== PLACEMENT_VERSION || !isToken(reply.runtime)) return malformed;
  if (!reply.ok) return `runtime host ${String(reply.name).slice(0, 128)} declined: ${String(reply.error).slice(0, 500)}`;
  if (reply.conn !== request.conn || typeof reply.name !== 'string') return malformed;
  const left = owner.excludedHost(reply.runtime, reply.key);
  if (left) return `runtime host ${reply.name.slice(0, 128)} was dropped from placement (${left})`;
  if (!own) return {};
  const text = replyText(settings.agentId, request.eph!, reply);
  if (!verified(reply.key, text, reply.sig)) return `runtime host ${reply.name.slice(0, 128)} answered placement without a valid signature`;
  if (settings.trusted && !settings.trusted.includes(reply.key!)) {
    return `runtime host ${reply.name.slice(0, 128)} signed with a key this agent host does not trust (${reply.key})`;
  }
  const keys = deriveKeys(own, reply.eph, `${requestText(settings.agentId, request)}\n${text}`);
  return keys ? { keys } : malformed;
}

/** A failed NATS request to runtime hosts (placement, a heartbeat), as text: nobody subscribed, no answer in time, or the client's message. */
export function describeRequestError(error: unknown, subject: string, timeoutMs: number): string {
  const text = (error as Error)?.message ?? String(error);
  const cause = (error as { cause?: unknown })?.cause;
  const names = [error, cause].map((e) => (e as Error | undefined)?.name ?? '');
  const noResponders = (error as { isNoResponders?: () => boolean })?.isNoResponders?.() || names.includes('NoRespondersError') || /no responders/i.test(text);
  if (noResponders) return `no runtime host is subscribed to ${subject}`;
  if (names.includes('TimeoutError') || /timeout/i.test(text)) return `a runtime host did not answer within ${timeoutMs} ms`;
  return text;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
