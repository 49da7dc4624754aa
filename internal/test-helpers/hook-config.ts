/** A `command` hook handler for a hooks config: `text` runs in the hook shell; `extra` adds fields (`timeout`, `required`, …). */
export function commandHook(text: string, extra: Record<string, unknown> = {}) {
  return { type: 'command' as const, command: text, ...extra };
}
