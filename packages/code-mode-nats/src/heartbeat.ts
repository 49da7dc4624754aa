import type { NatsConnection } from '@nats-io/transport-node';
import type { Link } from './agent-link';
import type { AgentSettings } from './options';
import { describeRequestError } from './placement';
import { verified } from './seal';
import { pingText, randomToken, type Subjects } from './subjects';

/** The heartbeat of one runtime host and the links it covers. */
interface Beat {
  links: Set<Link>;
  answeredAt: number;
  timer: NodeJS.Timeout;
}

/** What the heartbeats need of the agent host. */
export interface HeartbeatsOwner {
  /** Ends a link from the agent host's side with `cause`. */
  lose(link: Link, cause: string): void;
  /** Whether the agent host is shutting down (a failed heartbeat then loses nothing). */
  closing(): boolean;
}

/** Liveness of the runtime hosts an agent host has links to: one heartbeat per runtime host. */
export class Heartbeats {
  private readonly settings: AgentSettings;
  private readonly names: Subjects;
  private readonly owner: HeartbeatsOwner;
  /** Heartbeats by runtime host: one request per interval covers all of this agent host's connections there. */
  private readonly beats = new Map<string, Beat>();

  constructor(settings: AgentSettings, names: Subjects, owner: HeartbeatsOwner) {
    this.settings = settings;
    this.names = names;
    this.owner = owner;
  }

  /** Adds a link to its runtime host's heartbeat, starting it for the first link there. */
  add(nc: NatsConnection, link: Link): void {
    let beat = this.beats.get(link.runtime);
    if (!beat) {
      beat = { links: new Set(), answeredAt: Date.now(), timer: undefined as never };
      const started = beat;
      started.timer = setInterval(() => this.ping(nc, link.runtime, link.name, started), this.settings.intervalMs);
      started.timer.unref();
      this.beats.set(link.runtime, beat);
    }
    beat.links.add(link);
  }

  /** Takes a link out of its runtime host's heartbeat, stopping it with the last link there. */
  remove(link: Link): void {
    const beat = this.beats.get(link.runtime);
    if (beat?.links.delete(link) && beat.links.size === 0) {
      clearInterval(beat.timer);
      this.beats.delete(link.runtime);
    }
  }

  /**
   * One heartbeat to a runtime host: a request on its ping subject naming every connection this
   * agent host has there. A host whose process ended has no subscription left, so the server
   * answers "no responders" at once; a host that is stopped or cut off does not answer, and its
   * connections are lost after `heartbeat.timeoutMs`. Either way the loss is detected within
   * `intervalMs + timeoutMs` of the host going silent. Pings do not wait for each other: one sent
   * to a host that died before answering must not hold back the next one, which the server
   * answers at once with "no responders". Silence is judged by the last answer.
   */
  private ping(nc: NatsConnection, runtime: string, name: string, beat: Beat): void {
    const { heartbeatTimeoutMs } = this.settings;
    const loseAll = (cause: string) => {
      for (const link of [...beat.links]) this.owner.lose(link, cause);
    };
    if (Date.now() - beat.answeredAt > heartbeatTimeoutMs) return loseAll(`runtime host ${name} stopped answering (no reply to a heartbeat for ${heartbeatTimeoutMs} ms)`);
    const subject = `${this.names.runtime(runtime, this.settings.agentId, '_')}.ping`;
    const conns = [...beat.links].map((link) => link.conn).join(',');
    // Sealing: the answer must carry the runtime host's signature over this request's nonce.
    const nonce = this.settings.sealing ? randomToken() : undefined;
    nc.request(subject, nonce ? `${conns} ${nonce}` : conns, { timeout: heartbeatTimeoutMs }).then(
      (msg) => {
        const text = this.pingAnswer(runtime, beat, msg.string(), nonce);
        // An answer that is not the runtime host's counts as none (its silence is judged as usual).
        if (text === undefined) return;
        beat.answeredAt = Math.max(beat.answeredAt, Date.now());
        if (text === 'ok') return;
        const unknown = new Set(text.startsWith('unknown ') ? text.slice(8).split(',') : []);
        for (const link of [...beat.links]) {
          if (unknown.has(link.conn) && link.client) this.owner.lose(link, `runtime host ${name} no longer knows this connection`);
        }
      },
      (error: unknown) => {
        if (this.owner.closing() || beat.links.size === 0) return;
        const text = describeRequestError(error, subject, heartbeatTimeoutMs);
        if (/no runtime host/.test(text)) loseAll(`runtime host ${name} is gone (its NATS subscription ended)`);
        else if (!/did not answer/.test(text)) loseAll(`heartbeat to runtime host ${name} failed: ${text}`);
      },
    );
  }

  /** A heartbeat's answer ("ok", "unknown a,b"); with a nonce, only when signed by the key a link to `runtime` was placed with. */
  private pingAnswer(runtime: string, beat: Beat, text: string, nonce: string | undefined): string | undefined {
    if (nonce === undefined) return text;
    const bar = text.lastIndexOf('|');
    if (bar < 0) return undefined;
    const answer = text.slice(0, bar);
    const signedText = pingText(this.settings.agentId, runtime, nonce, answer);
    return [...beat.links].some((link) => verified(link.key, signedText, text.slice(bar + 1))) ? answer : undefined;
  }
}
