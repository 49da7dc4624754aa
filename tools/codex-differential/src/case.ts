import type { ScriptItem, ScriptStep, RecordedRequest } from './mock-responses.ts';

/** Which tools the model is offered, and how. */
export type CaseMode = 'direct' | 'code-mode' | 'code-mode-only';

/** One scripted conversation both sides run. */
export interface DiffCase {
  /** `group/name`, e.g. `exec/quick`. */
  id: string;
  /** One line: what the case exercises. */
  what: string;
  mode?: CaseMode;
  /** Offer the clock tool (Codex: the `current_time_reminder` feature). */
  clock?: boolean;
  /** Offer get_context_remaining (Codex: the `token_budget` feature). */
  context?: boolean;
  /** Files laid into the workspace before the turn (path relative to it → content). */
  files?: Record<string, string>;
  /** The model's responses in order; a final assistant message follows. */
  steps: ScriptStep[];
  sandbox?: 'danger-full-access' | 'workspace-write' | 'read-only';
  /** hooks.json content (Codex: next to its config; Switchyard: createHookEngine). */
  hooks?: Record<string, unknown>;
  /** Compare the workspace's files after the turn too. */
  compareFiles?: boolean;
  /** Compare the tool table of the first request (one case per configuration does). */
  compareTools?: boolean;
  /** Seconds Codex may take (default 90). */
  timeoutSeconds?: number;
}

/** What one side's run produced. */
export interface SideRun {
  requests: RecordedRequest[];
  /** Files in the workspace after the turn (relative path → content), when compared. */
  files?: Record<string, string>;
  /** The workspace's absolute path (normalized to `<ws>`). */
  workspace: string;
  /** How the turn ended: `ok`, or the error the host saw. */
  outcome: string;
  /** Diagnostics (stderr, thrown error) for the report. */
  log: string;
}

let counter = 0;

/** A `function_call` item. */
export function fn(callId: string, name: string, args: unknown, namespace?: string): ScriptItem {
  counter += 1;
  return {
    type: 'function_call',
    id: `fc_${counter}`,
    call_id: callId,
    name,
    ...(namespace ? { namespace } : {}),
    arguments: typeof args === 'string' ? args : JSON.stringify(args),
  };
}

/** A `custom_tool_call` item. */
export function custom(callId: string, name: string, input: string): ScriptItem {
  counter += 1;
  return { type: 'custom_tool_call', id: `ctc_${counter}`, call_id: callId, name, input };
}

/** The last `session ID N` / `cell ID X` a tool output of the request named (for write_stdin / wait). */
export function lastMatch(request: RecordedRequest, pattern: RegExp): string {
  let found: string | undefined;
  for (const item of request.input) {
    if (item.type !== 'function_call_output' && item.type !== 'custom_tool_call_output') continue;
    const text = typeof item.output === 'string' ? item.output : JSON.stringify(item.output);
    for (const match of text.matchAll(new RegExp(pattern, 'g'))) found = match[1];
  }
  if (found === undefined) throw new Error(`no ${pattern} in the request`);
  return found;
}

export const sessionIdOf = (request: RecordedRequest) => Number(lastMatch(request, /session ID (\d+)/));
export const cellIdOf = (request: RecordedRequest) => lastMatch(request, /cell ID ([A-Za-z0-9_-]+)/);
