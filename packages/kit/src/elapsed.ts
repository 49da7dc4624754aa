/**
 * Milliseconds since `startedAt` (a `performance.now()` reading), rounded to the microsecond: event
 * durations read `44.024`, not the float noise of a subtraction (`44.0244560000001`).
 */
export function elapsedMs(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 1000) / 1000;
}
