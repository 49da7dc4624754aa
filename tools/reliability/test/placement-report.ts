/** What `fixtures/placement-host.ts` prints (placement-load.test.ts, placement-crash.test.ts). */
export interface PlacementReport {
  outcomes: Array<{ index: number; ms: number; kind: 'completed' | 'yielded' | 'terminated' | 'refused'; texts?: string[]; error?: string }>;
  /** Per session, how many times the tool ran for each of its 10 calls. */
  runs: number[][];
  mostWorkers: number;
  distinctWorkers: number;
  events: Array<{ session: number; type: string; reason?: string }>;
  latencyMs: { p50: number; p99: number };
  eventLoopDelayMs: { p99: number; max: number };
}

/** The host's time bound (ms). */
export const PLACEMENT_HOST_TIMEOUT_MS = 300_000;
