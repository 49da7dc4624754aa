/** Resolves after `ms` milliseconds of real time. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Waits until `check()` holds, asking every `intervalMs`; rejects with `timed out waiting for
 * <what>` after `timeoutMs`. For a condition the test requires (use `becomes` to test whether it
 * comes about).
 */
export async function until(check: () => boolean, what = 'the condition', timeoutMs = 30_000, intervalMs = 20): Promise<void> {
  if (!(await becomes(check, timeoutMs, intervalMs))) throw new Error(`timed out waiting for ${what} (${timeoutMs} ms)`);
}

/** Whether `check()` holds within `timeoutMs` (asked every `intervalMs`, and once more at the end). */
export async function becomes(check: () => boolean, timeoutMs: number, intervalMs = 20): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return check();
    await sleep(intervalMs);
  }
  return true;
}
