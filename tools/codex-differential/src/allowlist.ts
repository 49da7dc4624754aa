// The reviewed list of deliberate differences from the reference. Each entry names what differs,
// why Switchyard keeps it, and where a host reads about it. At most 8 entries; a new one needs review.
import type { DiffCase } from './case.ts';
import type { Observation } from './compare.ts';

export interface AllowedDifference {
  id: string;
  /** What differs, for the report. */
  what: string;
  /** Why Switchyard keeps the difference. */
  reason: string;
  /** The README that documents it for hosts. */
  documented: string;
  /** Case ids it may apply to. */
  cases: RegExp;
  /** Observation keys it may apply to (default: any). */
  keys?: RegExp;
  /** The reference shows the difference only on some runs (timing); a run without it does not retire the entry. */
  intermittent?: boolean;
}

export const ALLOWLIST: readonly AllowedDifference[] = [
  {
    id: 'patch-outside-workspace',
    what: 'apply_patch refuses a path outside the workspace (`../outside.txt`); Codex, under danger-full-access, writes it',
    reason: 'protects the host: a patch the model writes never lands outside the workspace unless the host sets `allowOutsideRoot`',
    documented: 'packages/tool-apply-patch/README.md (Decisions: Workspace root)',
    cases: /^patch\/outside-root$/,
    keys: /^(request 2 item 1 |files$)/,
  },
  {
    id: 'exec-description',
    what: "the `exec` tool's description: Switchyard's own wording of the same content, plus its Code Mode additions",
    reason: 'documented Code Mode additions the model must know of: `console`, TypeScript, failed calls rejecting with an `Error`, `ALL_TOOLS` declarations, the catalog line',
    documented: 'packages/code-mode/README.md (Decisions: Descriptions)',
    cases: /^code-mode(-only)?\/(text|tools)$/,
    keys: /^tools: exec description$/,
  },
  {
    id: 'structured-apply-patch-result',
    what: 'a nested `tools.apply_patch(...)` resolves with `{ status, added, modified, deleted }`; Codex resolves with `{}`',
    reason: 'documented Code Mode addition: a script can act on what the patch changed',
    documented: 'packages/tool-apply-patch/README.md (API: ApplyPatchToolResult)',
    cases: /^code-mode\/nested-patch$/,
    keys: /^request 2 item 1 /,
  },
  {
    id: 'code-mode-only-tool-carrier',
    what: "for a code-mode-only model Codex carries the tool table in an `additional_tools` input item; Switchyard sends it as the request's `tools`",
    reason: "`additional_tools` is read by OpenAI's newest catalog models only; `tools` is what every Responses-API model and provider reads (the table's content is compared either way)",
    documented: 'packages/code-mode/README.md (Decisions: code-mode-only tool table)',
    cases: /^code-mode-only\/tools$/,
    keys: /^tools: carried in$/,
  },
  {
    id: 'time-reminder',
    what: "Codex's current_time_reminder feature adds a developer message `It is … UTC.` before each request; Switchyard's session adds none",
    reason: 'the reminder is the host\'s to place: @switchyard/tool-clock ships the message and its schedule (`timeReminder`, `createTimeReminderSchedule`), the session inserts nothing on its own',
    documented: 'packages/tool-clock/README.md (Decisions: Reminder scheduling)',
    cases: /^clock\/curr-time$/,
    keys: /\(message developer\)$/,
    // Codex repeats the reminder only when the clock's second changed since the last one
    intermittent: true,
  },
  {
    id: 'context-usage-of-this-response',
    what: 'get_context_remaining counts the usage reported up to the previous response; Codex also counts the response that carries the call (110 tokens here)',
    reason: 'a step\'s context is captured once, when the step starts, so every call of a step sees the same budget whatever order the stream delivers usage and calls in',
    documented: 'packages/tool-context-remaining/README.md (Decisions: Usage)',
    cases: /^context\/remaining$/,
    keys: /^request 2 item 1 /,
  },
];

/** The entry that accepts this difference, if any. */
export function allowedBy(testCase: DiffCase, observation: Observation): AllowedDifference | undefined {
  return ALLOWLIST.find((entry) => entry.cases.test(testCase.id) && (!entry.keys || entry.keys.test(observation.key)));
}
