import {
  RespondToModelError,
  isJsonObject,
  type HookPayloadAdapter,
  type HookToolInput,
  type JsonObject,
  type JsonValue,
  type ToolInvocation,
  type ToolOutput,
} from '@switchyard/protocol';
import { ExecCommandOutput } from './exec-output';
import { typeInto, type TypedLine } from './typed-line';

/** What the adapters need from the toolset: how a call would run, and what a session runs. */
export interface ExecHookContext {
  /** The absolute working directory and the shell an exec_command call with these arguments runs in. */
  resolve(invocation: ToolInvocation, args: JsonObject): { workdir: string; shell: string };
  /** The command a live write_stdin session of the calling session was started with (`undefined` for an unknown id or another session's). */
  sessionCommand(id: number, invocation: ToolInvocation): string | undefined;
  /** The unfinished line typed into that process so far (`undefined` like `sessionCommand`). */
  sessionLine(id: number, invocation: ToolInvocation): TypedLine | undefined;
}

/**
 * The arguments as hooks see them: the parsed object, or `undefined` when they are not one. The
 * registry's parse (`invocation.args`) is reused: the exec tools' handlers only read their arguments.
 */
function argumentsOf(invocation: ToolInvocation): JsonObject | undefined {
  if (invocation.payload.kind !== 'function') return undefined;
  if (invocation.args !== undefined) return isJsonObject(invocation.args) ? invocation.args : undefined;
  const raw = invocation.payload.arguments;
  if (raw.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return isJsonObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function requireArguments(invocation: ToolInvocation, tool: string): JsonObject {
  const args = argumentsOf(invocation);
  if (!args) throw new RespondToModelError(`${tool} handler received unsupported payload`);
  return args;
}

/**
 * exec_command's hook adapter. Hooks see `Bash` (matchers may also name `exec_command`) with
 * `{command, shell, workdir}`: the command, and the shell and absolute working directory it will
 * run with. A rewrite needs a string `command`; string `shell` / `workdir` in it are applied too.
 * PostToolUse fires only for a finished process, with the same input and the output as response.
 */
export function execCommandHookAdapter(context: ExecHookContext): HookPayloadAdapter {
  const input = (invocation: ToolInvocation): HookToolInput | undefined => {
    const args = argumentsOf(invocation);
    // Without a string `cmd` the handler refuses the call itself; there is nothing to run.
    if (!args || typeof args.cmd !== 'string') return undefined;
    const { workdir, shell } = context.resolve(invocation, args);
    return { toolName: 'Bash', toolInput: { command: args.cmd, shell, workdir } };
  };
  return {
    pre: input,
    rewrite(invocation, updatedInput) {
      if (!isJsonObject(updatedInput) || typeof updatedInput.command !== 'string') {
        throw new RespondToModelError('hook returned updatedInput without string field `command`');
      }
      const args: JsonObject = { ...requireArguments(invocation, 'exec_command'), cmd: updatedInput.command };
      if (typeof updatedInput.shell === 'string') args.shell = updatedInput.shell;
      if (typeof updatedInput.workdir === 'string') args.workdir = updatedInput.workdir;
      return { kind: 'function', arguments: JSON.stringify(args) };
    },
    post(invocation, output) {
      if (!(output instanceof ExecCommandOutput)) return undefined;
      const { exitCode, sessionId } = output.result;
      if (exitCode === undefined || sessionId !== undefined) return undefined;
      const hookInput = input(invocation);
      return hookInput ? { input: hookInput, response: output.truncatedOutput } : undefined;
    },
  };
}

/**
 * write_stdin's hook adapter: what is typed into a running command is policy too. Hooks see
 * `write_stdin` (matchers may also name `Bash`, so a shell guard covers typed commands) with
 * `{session_id, chars, command, line}` — `command` is what the session was started with, `line`
 * the input this write submits or leaves on the line, joined with earlier unfinished writes and
 * line edits applied (both absent for an unknown session; a write ending a line edited with keys
 * not followed is refused by the handler). A rewrite needs a string `chars`. PostToolUse fires after every answer, with
 * the output read as response — except the answer that sees the process finish: that one is the
 * exec_command's own PostToolUse, as the reference fires it, `Bash` with `{command}` and the
 * exec_command's call id (matchers naming `write_stdin` still match it: its aliases).
 */
export function writeStdinHookAdapter(context: ExecHookContext): HookPayloadAdapter {
  const inputFor = (args: JsonObject, command: string | undefined, line?: string): HookToolInput => {
    const toolInput: JsonObject = { session_id: args.session_id ?? null, chars: args.chars ?? '' };
    if (command !== undefined) toolInput.command = command;
    if (line !== undefined) toolInput.line = line;
    return { toolName: 'write_stdin', aliases: ['Bash'], toolInput };
  };
  // What this write submits or leaves on the line: earlier unfinished input joined with `chars`.
  const lineOf = (args: JsonObject, invocation: ToolInvocation) => {
    const pending = typeof args.session_id === 'number' ? context.sessionLine(args.session_id, invocation) : undefined;
    const chars = args.chars ?? '';
    return pending && typeof chars === 'string' ? typeInto(pending, chars).shown : undefined;
  };
  const sessionCommand = (args: JsonObject, invocation: ToolInvocation) =>
    typeof args.session_id === 'number' ? context.sessionCommand(args.session_id, invocation) : undefined;
  return {
    pre(invocation) {
      const args = argumentsOf(invocation);
      return args ? inputFor(args, sessionCommand(args, invocation), lineOf(args, invocation)) : undefined;
    },
    rewrite(invocation, updatedInput) {
      if (!isJsonObject(updatedInput) || typeof updatedInput.chars !== 'string') {
        throw new RespondToModelError('hook returned updatedInput without string field `chars`');
      }
      return { kind: 'function', arguments: JSON.stringify({ ...requireArguments(invocation, 'write_stdin'), chars: updatedInput.chars }) };
    },
    post(invocation, output: ToolOutput): { input: HookToolInput; response: JsonValue } | undefined {
      const args = argumentsOf(invocation);
      if (!args || !(output instanceof ExecCommandOutput)) return undefined;
      // A finished session has left the process table; its answer still names the command.
      const command = output.result.hookCommand ?? sessionCommand(args, invocation);
      const { exitCode, hookCallId } = output.result;
      if (exitCode !== undefined && hookCallId !== undefined && command !== undefined) {
        return { input: { toolName: 'Bash', aliases: ['write_stdin'], toolInput: { command }, toolUseId: hookCallId }, response: output.truncatedOutput };
      }
      return { input: inputFor(args, command), response: output.truncatedOutput };
    },
  };
}
