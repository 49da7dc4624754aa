import { optionRules as rule, type OptionRule, type OptionsShape } from '@switchyard/kit/internal';
import type { CodeModeRuntimeOptions } from './code-mode-runtime';
import type { ProcessWorkerOptions, RemoteRuntimeOptions } from './process-runtime';
import { MIN_MAX_FRAME_BYTES } from './protocol';
import { CELL_LIMITS, CELL_LIMIT_RULES } from './cell-limits';

/** The CPU time a cell gets when `cpuTimeMs` is not set (ms): a `while (true) {}` ends after it. */
export const DEFAULT_CPU_TIME_MS: number = CELL_LIMITS.cpuTimeMs.fallback;

/** The per-cell limits every runtime of this package takes (and a runtime elsewhere is sent). */
export type RuntimeLimitOptions = Omit<CodeModeRuntimeOptions, 'isolation' | 'workers' | 'nodeSnapshotCheck'>;

/** A number ≥ `min` (fractions are rounded down when read). */
const atLeast = (min: number): OptionRule => rule.number({ min });

/** Rules of the per-cell limits, for a host package that takes them among its own options (`createNatsRuntime`). */
export const RUNTIME_LIMIT_OPTION_RULES: OptionsShape<RuntimeLimitOptions> = {
  ...CELL_LIMIT_RULES,
  storedValues: rule.boolean(),
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
