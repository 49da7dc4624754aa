import { DEFAULT_MAX_FRAME_BYTES, RUNTIME_HOST_CAPS, RUNTIME_LIMIT_OPTION_RULES, createRemoteRuntime, type CellLimitCaps, type RemoteRuntimeOptions } from '@switchyard/code-mode-runtime/protocol';
import { checkOptions, optionRules as rule, type OptionsShape } from '@switchyard/kit/internal';
import type { NatsHeartbeatOptions, NatsPlacementOptions, NatsRuntimeOptions } from './agent-runtime';
import { checkConnectOptions, checkToken, positive, type NatsConnectOptions } from './connection';
import type { RuntimeHostLimits, ServeRuntimeOverNatsOptions } from './runtime-host';
import { checkPublicKeys, loadIdentity, type NatsIdentity } from './seal';
import { randomToken } from './subjects';

// Unknown keys (and values no later check looks at) are refused here, naming the option and the
// closest valid one; values with a check of their own (servers, auth, tokens, the numbers below)
// keep it, with its message ("createNatsRuntime option heartbeat.intervalMs must be a number >= 10").
const checkedLater = rule.any();

const CONNECT_RULES: OptionsShape<NatsConnectOptions> = {
  servers: rule.required(checkedLater),
  auth: checkedLater,
  tls: rule.object(),
  subjectPrefix: checkedLater,
  connectTimeoutMs: checkedLater,
};

const NATS_RUNTIME_RULES: OptionsShape<NatsRuntimeOptions> = {
  ...RUNTIME_LIMIT_OPTION_RULES,
  ...CONNECT_RULES,
  agentId: checkedLater,
  placement: rule.shape<NatsPlacementOptions>({ timeoutMs: checkedLater, attempts: checkedLater, dropMs: checkedLater }),
  heartbeat: rule.shape<NatsHeartbeatOptions>({ intervalMs: checkedLater, timeoutMs: checkedLater }),
  maxFrameBytes: checkedLater,
  name: rule.string(),
  identity: checkedLater,
  trustedRuntimeHosts: checkedLater,
  sealing: rule.boolean(),
};

const HOST_LIMIT_RULES: OptionsShape<RuntimeHostLimits> = {
  // the caps on the per-cell limits: one per limit a runtime holds (checked by RUNTIME_HOST_CAPS.fill)
  ...(Object.fromEntries(RUNTIME_HOST_CAPS.names.map((name) => [name, checkedLater])) as OptionsShape<CellLimitCaps>),
  maxSessions: checkedLater,
  maxConnections: checkedLater,
  maxFrameBytes: checkedLater,
  maxReassemblyBytes: checkedLater,
  agentSilenceMs: checkedLater,
};

const RUNTIME_HOST_RULES: OptionsShape<ServeRuntimeOverNatsOptions> = {
  ...CONNECT_RULES,
  name: checkedLater,
  id: checkedLater,
  queue: checkedLater,
  limits: rule.shape(HOST_LIMIT_RULES),
  onClosed: rule.function(),
  identity: checkedLater,
  trustedAgentHosts: checkedLater,
  sealing: checkedLater,
  isolation: checkedLater,
  workers: rule.shape<NonNullable<ServeRuntimeOverNatsOptions['workers']>>({
    max: checkedLater,
    admissionMs: checkedLater,
    maxQueued: checkedLater,
    idleMs: checkedLater,
    prewarm: checkedLater,
    memoryMb: checkedLater,
    heartbeatTimeoutMs: checkedLater,
    deathSignal: checkedLater,
  }),
};

/**
 * Throws `CONFIG` for an unknown or mistyped option of `createNatsRuntime` (the engine limits
 * included) and for bad connection options; returns the subject prefix.
 */
function checkNatsRuntimeOptions(options: NatsRuntimeOptions): string {
  checkOptions('createNatsRuntime', options, NATS_RUNTIME_RULES);
  return checkConnectOptions(options, 'createNatsRuntime');
}

/** The checked settings of one agent host (`createNatsRuntime`'s options, defaults applied). */
export interface AgentSettings {
  options: NatsConnectOptions;
  prefix: string;
  agentId: string;
  timeoutMs: number;
  attempts: number;
  dropMs: number;
  intervalMs: number;
  heartbeatTimeoutMs: number;
  maxFrameBytes: number;
  name: string;
  identity: NatsIdentity;
  trusted?: string[];
  sealing: boolean;
}

/** The cell limits each session's remote runtime takes (the options that are not about NATS). */
export type EngineOptions = Omit<RemoteRuntimeOptions, 'placement' | 'onShutdown'>;

/**
 * Checks every option of `createNatsRuntime` (throws `CONFIG` naming the option) and returns the
 * agent host's settings, defaults applied, and the engine limits.
 */
export function natsRuntimeSettings(options: NatsRuntimeOptions): { settings: AgentSettings; engine: EngineOptions } {
  const prefix = checkNatsRuntimeOptions(options);
  const agentId = options.agentId === undefined ? randomToken() : checkToken(options.agentId, 'createNatsRuntime option agentId');
  const placement = options.placement ?? {};
  const timeoutMs = placement.timeoutMs === undefined ? 5_000 : positive(placement.timeoutMs, 'createNatsRuntime option placement.timeoutMs', 1);
  const attempts = placement.attempts === undefined ? 5 : positive(placement.attempts, 'createNatsRuntime option placement.attempts', 1);
  const dropMs = placement.dropMs === undefined ? 600_000 : positive(placement.dropMs, 'createNatsRuntime option placement.dropMs', 0);
  const heartbeat = options.heartbeat ?? {};
  const intervalMs = heartbeat.intervalMs === undefined ? 1_000 : positive(heartbeat.intervalMs, 'createNatsRuntime option heartbeat.intervalMs', 10);
  const heartbeatTimeoutMs = heartbeat.timeoutMs === undefined ? 10_000 : positive(heartbeat.timeoutMs, 'createNatsRuntime option heartbeat.timeoutMs', 10);
  const maxFrameBytes = options.maxFrameBytes === undefined ? DEFAULT_MAX_FRAME_BYTES : positive(options.maxFrameBytes, 'createNatsRuntime option maxFrameBytes', 64 * 1024);
  const { servers, auth, tls, subjectPrefix, connectTimeoutMs, agentId: _agent, placement: _placement, heartbeat: _heartbeat, maxFrameBytes: _frames, name, identity: _identity, trustedRuntimeHosts, sealing, ...engine } = options;
  const identity = loadIdentity(options.identity, auth, 'createNatsRuntime');
  const trusted = trustedRuntimeHosts === undefined ? undefined : checkPublicKeys(trustedRuntimeHosts, 'createNatsRuntime option trustedRuntimeHosts');
  // The engine limits are checked now (a CONFIG error names the option), not at the first cell.
  void createRemoteRuntime({ ...engine, placement: { acquire: () => Promise.reject(new Error('unused')) } });
  const settings: AgentSettings = {
    ...{ options, prefix, agentId, timeoutMs, attempts, dropMs, intervalMs, heartbeatTimeoutMs, maxFrameBytes, identity, trusted },
    sealing: sealing ?? true,
    name: name ?? `switchyard agent host ${agentId}`,
  };
  return { settings, engine };
}

/** Throws `CONFIG` for an unknown or mistyped option of `serveRuntimeOverNats` and for bad connection options; returns the subject prefix. */
export function checkRuntimeHostOptions(options: ServeRuntimeOverNatsOptions): string {
  checkOptions('serveRuntimeOverNats', options, RUNTIME_HOST_RULES);
  return checkConnectOptions(options, 'serveRuntimeOverNats');
}
