import type { FunctionToolSpec, JsonSchema } from '@switchyard/protocol';

/** The exec_command description the model reads. */
export const EXEC_COMMAND_DESCRIPTION = 'Runs a command in a PTY, returning output or a session ID for ongoing interaction.';
/** What the exec_command description adds when the session delivers process exits (`background: true`). */
export const EXEC_COMMAND_BACKGROUND_NOTE =
  'When the command is still running as this call answers, its exit and final output are delivered to you on their own once it finishes, as another output of this call; you do not need to poll it with write_stdin (use write_stdin only to send input or to see intermediate output).';
/** The write_stdin description the model reads. */
export const WRITE_STDIN_DESCRIPTION = 'Writes characters to an existing unified exec session and returns recent output.';

const RESULT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    chunk_id: { type: 'string', description: 'Identifier of this chunk of output.' },
    wall_time_seconds: { type: 'number', description: 'Seconds the call took.' },
    exit_code: { type: 'integer', description: 'Exit code, once the process has finished.' },
    session_id: { type: 'integer', description: 'Session id for write_stdin while the process runs.' },
    original_token_count: { type: 'integer', description: 'Token count of the output before truncation (only when truncated).' },
    output: { type: 'string', description: 'Output collected during the call (stdout and stderr interleaved).' },
  },
  required: ['wall_time_seconds', 'output'],
};

/** The exec_command spec; `login` is offered only when login shells are allowed. */
export function execCommandSpec(options: { allowLoginShell: boolean; background?: boolean }): FunctionToolSpec {
  const properties: Record<string, JsonSchema> = {
    cmd: { type: 'string', description: 'Shell command to execute.' },
    workdir: { type: 'string', description: 'Working directory for the command, relative to the workspace root; defaults to the root.' },
    shell: { type: 'string', description: "Shell binary to run the command with; defaults to the user's shell." },
    tty: { type: 'boolean', description: 'Give the process a pseudo-terminal (keeps stdin open for write_stdin). Defaults to false: plain pipes, no stdin.' },
    yield_time_ms: { type: 'number', description: 'How long to wait for output before answering, in milliseconds (250 to 30000; default 10000).' },
    max_output_tokens: { type: 'number', description: 'Maximum number of output tokens to return; the middle of longer output is cut (default 10000).' },
  };
  if (options.allowLoginShell) {
    properties.login = { type: 'boolean', description: 'Run the shell as a login shell (-l). Defaults to true.' };
  }
  properties.sandbox_permissions = {
    type: 'string',
    enum: ['use_default', 'require_escalated'],
    description: 'Sandbox permissions: "use_default" (default) or "require_escalated" to ask the user to run outside the sandbox.',
  };
  properties.justification = { type: 'string', description: 'Why escalated permissions are needed; shown to the user when asking.' };
  properties.prefix_rule = {
    type: 'array',
    items: { type: 'string' },
    description: 'Command prefix (as words) the user may approve for the rest of the session, e.g. ["npm", "test"].',
  };
  return {
    type: 'function',
    name: 'exec_command',
    description: options.background ? `${EXEC_COMMAND_DESCRIPTION} ${EXEC_COMMAND_BACKGROUND_NOTE}` : EXEC_COMMAND_DESCRIPTION,
    strict: false,
    parameters: { type: 'object', properties, required: ['cmd'], additionalProperties: false },
    outputSchema: RESULT_SCHEMA,
  };
}

/** The write_stdin spec. */
export function writeStdinSpec(): FunctionToolSpec {
  return {
    type: 'function',
    name: 'write_stdin',
    description: WRITE_STDIN_DESCRIPTION,
    strict: false,
    parameters: {
      type: 'object',
      properties: {
        session_id: { type: 'number', description: 'Session id of a running exec_command process.' },
        chars: { type: 'string', description: 'Characters to write to stdin; empty (default) only polls for output.' },
        yield_time_ms: { type: 'number', description: 'How long to wait for output before answering, in milliseconds (default 250; an empty poll waits at least 5000).' },
        max_output_tokens: { type: 'number', description: 'Maximum number of output tokens to return (default 10000).' },
      },
      required: ['session_id'],
      additionalProperties: false,
    },
    outputSchema: RESULT_SCHEMA,
  };
}
