import { optionRules as rule, type OptionRule, type OptionsShape } from '@switchyard/kit/internal';
import type { CodeModeRuntimeOptions } from './code-mode-runtime';
import type { ProcessWorkerOptions, RemoteRuntimeOptions } from './process-runtime';
import { MIN_MAX_FRAME_BYTES } from './protocol';

/** The CPU time a cell gets when `cpuTimeMs` is not set (ms): a `while (true) {}` ends after it. */
export const DEFAULT_CPU_TIME_MS = 60_000;

/** The per-cell limits every runtime of this package takes (and a runtime elsewhere is sent). */
export type RuntimeLimitOptions = Omit<CodeModeRuntimeOptions, 'isolation' | 'workers' | 'nodeSnapshotCheck'>;

/** A number ≥ `min` (fractions are rounded down when read). */
const atLeast = (min: number): OptionRule => rule.number({ min });

/** A number ≥ 1, or `false` for no limit. */
const limitOrFalse: OptionRule = (value, path) => {
  if (value === false) return undefined;
  return atLeast(1)(value, path)?.replace(/^must be a number ≥ 1/, 'must be a number ≥ 1 or false');
};

/** Rules of the per-cell limits, for a host package that takes them among its own options (`createNatsRuntime`). */
export const RUNTIME_LIMIT_OPTION_RULES: OptionsShape<RuntimeLimitOptions> = {
  heapMb: atLeast(8),
  cpuTimeMs: limitOrFalse,
  wallTimeMs: limitOrFalse,
  maxCells: atLeast(1),
  maxInFlightCalls: atLeast(1),
  maxInFlightArgumentChars: atLeast(1),
  maxOutputBytes: atLeast(1),
  maxOutputItems: atLeast(1),
  maxTimers: atLeast(1),
  storedValues: rule.boolean(),
  maxStoredBytes: atLeast(1),
  maxStoredKeys: atLeast(1),
  maxInFlightResultBytes: atLeast(1),
  maxJournalBytes: atLeast(0),
};

const WORKER_OPTION_RULES: OptionsShape<ProcessWorkerOptions> = {
  max: atLeast(1),
  sessionsPerWorker: atLeast(1),
  perSession: rule.boolean(),
  admissionMs: atLeast(0),
  maxQueued: atLeast(0),
  idleMs: atLeast(1),
  prewarm: rule.boolean(),
  memoryMb: atLeast(64),
  heartbeatTimeoutMs: atLeast(100),
  maxFrameBytes: atLeast(MIN_MAX_FRAME_BYTES),
  deathSignal: rule.boolean(),
  shared: rule.boolean(),
};

export const CODE_MODE_RUNTIME_OPTION_RULES: OptionsShape<CodeModeRuntimeOptions> = {
  ...RUNTIME_LIMIT_OPTION_RULES,
  isolation: rule.oneOf('process', 'in-process'),
  nodeSnapshotCheck: rule.oneOf('warn', 'throw', 'ignore'),
  workers: rule.shape(WORKER_OPTION_RULES),
};

const placementRule: OptionRule = (value) => {
  const placement = value as { acquire?: unknown } | null;
  return typeof placement === 'object' && placement !== null && typeof placement.acquire === 'function'
    ? undefined
    : 'must be a RuntimePlacement (an object with acquire())';
};

export const REMOTE_RUNTIME_OPTION_RULES: OptionsShape<RemoteRuntimeOptions> = {
  ...RUNTIME_LIMIT_OPTION_RULES,
  placement: rule.required(placementRule),
  onShutdown: rule.function(),
};
