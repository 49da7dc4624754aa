import { createRemoteRuntime, type RemoteRuntimeOptions, type RuntimePlacement } from '@switchyard/code-mode-runtime/protocol';
import { SwitchyardError, type CellHost, type CodeModeRuntime, type CodeModeSession } from '@switchyard/protocol';
import { Agent } from './agent-host';
import type { Stick } from './agent-link';
import type { NatsConnectOptions } from './connection';
import { natsRuntimeSettings } from './options';
import type { NatsIdentityOption } from './seal';

/** How sessions are placed on runtime hosts. */
export interface NatsPlacementOptions {
  /** How long one placement request waits for a runtime host's answer (ms). Default 5,000. */
  timeoutMs?: number;
  /** Placement requests per session before its cell fails (a full or silent host is skipped by asking again). Default 5. */
  attempts?: number;
  /**
   * How long a runtime host that misbehaved (frames that do not open, a protocol violation, a call
   * or notify flood past this host's limits) is left out of this agent host's
   * placements (ms); 0: never left out (a bus without per-runtime-host publish permissions, where
   * any client could forge frames on a runtime host's subjects). Default 600,000.
   */
  dropMs?: number;
}

/**
 * A runtime host misbehaved towards this agent host and is left out of its placements for `forMs`:
 * placement replies from it (its id or its key) are refused, so the next exec places on another
 * host; the connection it misbehaved on ends, this agent host's other connections to it go on. Also reported through `process.emitWarning` (type
 * `SwitchyardWarning`, code `SWITCHYARD_RUNTIME_HOST_DROPPED`).
 */
export interface RuntimeHostDroppedEvent {
  readonly type: 'runtime-host-dropped';
  /** The runtime host's subject token. */
  readonly runtime: string;
  /** Its name (as it announced it). */
  readonly name: string;
  /** The public NKey it signed its placement with (sealed placements). */
  readonly key?: string;
  /** What it did ("a frame from runtime host r1 did not open …", "exec nested call limit exceeded: …"). */
  readonly cause: string;
  /** How long it is left out (ms). */
  readonly forMs: number;
}

/** Events of a NATS runtime (one so far). */
export type NatsRuntimeEvent = RuntimeHostDroppedEvent;

/** The runtime `createNatsRuntime` returns: a `CodeModeRuntime` that also reports its events. */
export interface NatsRuntime extends CodeModeRuntime {
  /** Subscribes to an event; returns the unsubscribe function. A listener that throws is reported as a warning, never thrown into the runtime. */
  on<T extends NatsRuntimeEvent['type']>(type: T, listener: (event: Extract<NatsRuntimeEvent, { type: T }>) => void): () => void;
}

/** Liveness of runtime hosts, as seen from the agent host. */
export interface NatsHeartbeatOptions {
  /** A heartbeat request goes to each runtime host this agent host is connected to this often (ms). Default 1,000. */
  intervalMs?: number;
  /** A heartbeat not answered within this long loses the runtime host (ms). Default 10,000. */
  timeoutMs?: number;
}

/** Options of {@link createNatsRuntime}: the runtime's cell limits plus where NATS is. */
export interface NatsRuntimeOptions extends Omit<RemoteRuntimeOptions, 'placement' | 'onShutdown'>, NatsConnectOptions {
  /**
   * This agent host's subject token: its sessions' frames travel on subjects that name it, and
   * NATS permissions scoped to it keep other agent hosts out. Default: 16 random characters.
   */
  agentId?: string;
  placement?: NatsPlacementOptions;
  heartbeat?: NatsHeartbeatOptions;
  /** Biggest frame accepted from a runtime host (bytes, reassembled). Default 64 MiB. */
  maxFrameBytes?: number;
  /** Shown to the NATS server as the connection's name. Default `switchyard agent host <agentId>`. */
  name?: string;
  /**
   * The NKey this agent host signs placements with (`{ seed }` or `{ seedFile }`). Default: the
   * NKey of `auth` when it is one, else a key made for this process (runtime hosts that pin agent
   * keys refuse it).
   */
  identity?: NatsIdentityOption;
  /**
   * The public NKeys of the runtime hosts this agent host places sessions on; a placement signed
   * by any other key is refused. Default: any runtime host (frames are still sealed, but a rogue
   * runtime host that answers placement is not detected).
   */
  trustedRuntimeHosts?: string | string[];
  /** `false`: frames travel in clear (benchmarks, a trusted single-tenant bus). Default `true`. */
  sealing?: boolean;
}

/**
 * A `CodeModeRuntime` whose cells run on runtime hosts reached through NATS (see
 * `serveRuntimeOverNats`). Each session is placed on one runtime host through the placement queue
 * group and its later cells go to the same host while it lives (sticky); committed stored values
 * and cell ids stay here, and every nested call comes back here to run through this host's own
 * router. A runtime host that dies, stops answering or loses frames takes no cell with it: each is
 * replayed elsewhere from the journal kept here (else fails: "exec runtime ended unexpectedly: …");
 * the session's next cell is placed on a live host. Unknown options are a `CONFIG` error naming it.
 */
export function createNatsRuntime(options: NatsRuntimeOptions): NatsRuntime {
  const { settings, engine } = natsRuntimeSettings(options);
  const agent = new Agent(settings);

  const runtimes = new Set<CodeModeRuntime>();
  let shutdownPromise: Promise<void> | undefined;
  return {
    on: (type, listener) => agent.events.on(type, listener),
    openSession(host: CellHost): CodeModeSession {
      if (shutdownPromise) throw new SwitchyardError('SHUTTING_DOWN', 'code mode runtime is shutting down');
      // One remote runtime per session: its placement remembers the session's runtime host.
      const stick: Stick = {};
      const sessionPlacement: RuntimePlacement = { acquire: (sink) => agent.acquire(stick, sink) };
      const runtime = createRemoteRuntime({ ...engine, placement: sessionPlacement });
      runtimes.add(runtime);
      const session = runtime.openSession(agent.watchedHost(host, stick));
      return {
        createCell: (cell) => session.createCell(cell),
        observe: (cellId, observe) => session.observe(cellId, observe),
        terminate: (cellId) => session.terminate(cellId),
        shutdown: async () => {
          await runtime.shutdown();
          runtimes.delete(runtime);
        },
      };
    },
    shutdown(): Promise<void> {
      shutdownPromise ??= (async () => {
        await Promise.all([...runtimes].map((runtime) => runtime.shutdown()));
        runtimes.clear();
        await agent.close();
      })();
      return shutdownPromise;
    },
  };
}
