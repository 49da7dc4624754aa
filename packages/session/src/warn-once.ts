/** Messages already reported in this process (bounded: a flood of distinct messages stops being reported). */
const reported = new Set<string>();
const MAX_REPORTED = 1_000;

/**
 * Reports `message` through `process.emitWarning` (type `SwitchyardWarning`, the given code) the
 * first time this process sees it; later calls with the same message are silent. Never throws.
 */
export function warnOnce(message: string, code: string): void {
  if (reported.has(message) || reported.size >= MAX_REPORTED) return;
  reported.add(message);
  try {
    process.emitWarning(message, { type: 'SwitchyardWarning', code });
  } catch {
    // a broken warning listener must not break the session
  }
}
