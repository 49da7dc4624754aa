/** A unique marker for process-survival tests: a number of seconds `sleep` accepts, found again in /proc by its command line. */
export function uniqueSleepSeconds(): string {
  return `${300 + Math.floor(Math.random() * 600)}.${Math.floor(Math.random() * 1e6)}`;
}
