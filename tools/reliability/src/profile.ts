/** Which profile runs: `short` inside `npm test`, `long` by hand (`pnpm --filter @switchyard/reliability long`). */
export type ReliabilityProfile = 'short' | 'long';

/** The profile selected by `RELIABILITY_PROFILE` (anything but `long` is `short`). */
function currentProfile(environment: NodeJS.ProcessEnv = process.env): ReliabilityProfile {
  return environment.RELIABILITY_PROFILE === 'long' ? 'long' : 'short';
}

/** Picks the count for the running profile. */
export function byProfile<T>(short: T, long: T, profile: ReliabilityProfile = currentProfile()): T {
  return profile === 'long' ? long : short;
}

/** Prints one line of the suite's account: what was tried and what held. */
export function report(area: string, line: string): void {
  console.log(`[reliability:${currentProfile()}] ${area}: ${line}`);
}
