import { RUNTIME_LIMIT_OPTION_RULES } from '@switchyard/code-mode-runtime';
import { checkOptions, optionRules as rule, type OptionsShape } from '@switchyard/kit';
import type { NatsHeartbeatOptions, NatsPlacementOptions, NatsRuntimeOptions } from './agent-runtime';
import { checkConnectOptions, type NatsConnectOptions } from './connection';
import type { RuntimeHostLimits, ServeRuntimeOverNatsOptions } from './runtime-host';

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
  maxSessions: checkedLater,
  maxConnections: checkedLater,
  heapMb: checkedLater,
  cpuTimeMs: checkedLater,
  wallTimeMs: checkedLater,
  maxCells: checkedLater,
  maxInFlightCalls: checkedLater,
  maxInFlightArgumentChars: checkedLater,
  maxOutputBytes: checkedLater,
  maxOutputItems: checkedLater,
  maxTimers: checkedLater,
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
export function checkNatsRuntimeOptions(options: NatsRuntimeOptions): string {
  checkOptions('createNatsRuntime', options, NATS_RUNTIME_RULES);
  return checkConnectOptions(options, 'createNatsRuntime');
}

/** Throws `CONFIG` for an unknown or mistyped option of `serveRuntimeOverNats` and for bad connection options; returns the subject prefix. */
export function checkRuntimeHostOptions(options: ServeRuntimeOverNatsOptions): string {
  checkOptions('serveRuntimeOverNats', options, RUNTIME_HOST_RULES);
  return checkConnectOptions(options, 'serveRuntimeOverNats');
}
