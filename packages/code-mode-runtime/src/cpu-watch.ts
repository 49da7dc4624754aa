/** How often running cells are checked (CPU time, an isolate lost at its memory limit) (ms). */
export const CPU_POLL_MS = 10;

const checks = new Set<() => void>();
let ticker: NodeJS.Timeout | undefined;

/**
 * Runs `check` every 10 ms until the returned function is called. One timer serves every cell of
 * the process (and is unref'd: it never keeps the process alive by itself).
 */
export function watchCpu(check: () => void): () => void {
  checks.add(check);
  if (!ticker) {
    ticker = setInterval(() => {
      for (const run of checks) {
        try {
          run();
        } catch {
          // a check never breaks the others
        }
      }
    }, CPU_POLL_MS);
    ticker.unref();
  }
  return () => {
    checks.delete(check);
    if (checks.size === 0 && ticker) {
      clearInterval(ticker);
      ticker = undefined;
    }
  };
}
