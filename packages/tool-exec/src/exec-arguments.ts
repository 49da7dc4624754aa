import { RespondToModelError, type JsonObject, type ToolInvocation } from '@switchyard/protocol';
import { invocationArguments } from '@switchyard/kit/internal';

const MIN_YIELD_MS = 250;
const MAX_YIELD_MS = 30_000;
const DEFAULT_EXEC_YIELD_MS = 10_000;
const DEFAULT_WRITE_YIELD_MS = 250;
const MIN_EMPTY_POLL_MS = 5_000;
const MAX_BACKGROUND_POLL_MS = 300_000;

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** The arguments of one exec_command call, read and defaulted. */
export interface ExecCommandArgs {
  cmd: string;
  workdir?: string;
  shell?: string;
  tty: boolean;
  yieldTimeMs: number;
  maxOutputTokens?: number;
  login?: boolean;
  escalate: boolean;
  justification?: string;
  prefixRule?: string[];
}

function optional<T>(args: JsonObject, key: string, type: 'string' | 'number' | 'boolean', tool: string): T | undefined {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== type || (type === 'number' && !Number.isFinite(value))) {
    throw new RespondToModelError(`${tool}: \`${key}\` must be a ${type}`, { code: 'INVALID_INPUT' });
  }
  return value as T;
}

/**
 * The exec_command arguments. `login` is read only when it is offered (`allowLoginShell`): the
 * handler reads nothing its schema does not declare, so an unoffered `login` is ignored like any
 * unknown property and the command runs as the host configured, with `-c`.
 */
export function parseExecArgs(invocation: ToolInvocation, allowLoginShell: boolean): ExecCommandArgs {
  const args = invocationArguments(invocation, 'exec_command');
  const cmd = optional<string>(args, 'cmd', 'string', 'exec_command');
  if (cmd === undefined || cmd.trim() === '') throw new RespondToModelError('exec_command: `cmd` must be a non-empty string', { code: 'INVALID_INPUT' });
  const permissions = optional<string>(args, 'sandbox_permissions', 'string', 'exec_command') ?? 'use_default';
  if (permissions !== 'use_default' && permissions !== 'require_escalated') {
    throw new RespondToModelError(`exec_command: unsupported sandbox_permissions "${permissions}" (use "use_default" or "require_escalated")`, { code: 'INVALID_INPUT' });
  }
  const prefix = args.prefix_rule;
  if (prefix !== undefined && prefix !== null && !(Array.isArray(prefix) && prefix.every((word) => typeof word === 'string'))) {
    throw new RespondToModelError('exec_command: `prefix_rule` must be an array of strings', { code: 'INVALID_INPUT' });
  }
  return {
    cmd,
    workdir: optional<string>(args, 'workdir', 'string', 'exec_command'),
    shell: optional<string>(args, 'shell', 'string', 'exec_command'),
    tty: optional<boolean>(args, 'tty', 'boolean', 'exec_command') ?? false,
    yieldTimeMs: clamp(optional<number>(args, 'yield_time_ms', 'number', 'exec_command') ?? DEFAULT_EXEC_YIELD_MS, MIN_YIELD_MS, MAX_YIELD_MS),
    maxOutputTokens: optional<number>(args, 'max_output_tokens', 'number', 'exec_command'),
    login: allowLoginShell ? optional<boolean>(args, 'login', 'boolean', 'exec_command') : undefined,
    escalate: permissions === 'require_escalated',
    justification: optional<string>(args, 'justification', 'string', 'exec_command'),
    prefixRule: Array.isArray(prefix) ? (prefix as string[]) : undefined,
  };
}

/** The arguments of one write_stdin call, read and defaulted. */
export interface WriteStdinArgs {
  id: number;
  chars: string;
  /** How long the call waits: an empty write (a poll) waits longer, up to 5 minutes. */
  yieldMs: number;
  maxOutputTokens?: number;
}

export function parseWriteArgs(invocation: ToolInvocation): WriteStdinArgs {
  const args = invocationArguments(invocation, 'write_stdin');
  const id = optional<number>(args, 'session_id', 'number', 'write_stdin');
  if (id === undefined) throw new RespondToModelError('write_stdin: `session_id` is required', { code: 'INVALID_INPUT' });
  const chars = optional<string>(args, 'chars', 'string', 'write_stdin') ?? '';
  const requestedYield = optional<number>(args, 'yield_time_ms', 'number', 'write_stdin') ?? DEFAULT_WRITE_YIELD_MS;
  return {
    id,
    chars,
    yieldMs: chars === '' ? clamp(requestedYield, MIN_EMPTY_POLL_MS, MAX_BACKGROUND_POLL_MS) : clamp(requestedYield, MIN_YIELD_MS, MAX_YIELD_MS),
    maxOutputTokens: optional<number>(args, 'max_output_tokens', 'number', 'write_stdin'),
  };
}
