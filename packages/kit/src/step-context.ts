import type { StepContext } from '@switchyard/protocol';

/** A minimal {@link StepContext} for tests and single-call hosts. Fields can be overridden. */
export function createStepContext(overrides: Partial<StepContext> = {}): StepContext {
  return {
    sessionId: 'session',
    turnId: 'turn-1',
    stepIndex: 1,
    cwd: process.cwd(),
    toolMode: 'direct',
    provider: {},
    turnState: new Map(),
    ...overrides,
  };
}
