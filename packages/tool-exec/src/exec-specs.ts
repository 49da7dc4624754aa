import type { FunctionToolSpec, JsonSchema } from '@switchyard/protocol';

/** The exec_command description the model reads. */
export const EXEC_COMMAND_DESCRIPTION = 'Runs a command in a PTY, returning output or a session ID for ongoing interaction.';
/** What the exec_command description adds when the session delivers process exits (`background: true`). */
export const EXEC_COMMAND_BACKGROUND_NOTE =
  'When the command is still running as this call answers, its exit and final output are delivered to you on their own once it finishes, as another output of this call; you do not need to poll it with write_stdin (use write_stdin only to send input or to see intermediate output).';
/** The write_stdin description the model reads. */
export const WRITE_STDIN_DESCRIPTION = 'Writes characters to an existing unified exec session and returns recent output.';

/** What a Code Mode cell receives, described in the reference's words (the `exec` description renders them). */
const RESULT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    chunk_id: { type: 'string', description: 'Chunk identifier included when the response reports one.' },
    exit_code: { type: 'number', description: 'Process exit code when the command finished during this call.' },
    original_token_count: { type: 'number', description: 'Approximate token count before output truncation.' },
    output: { type: 'string', description: 'Command output text, possibly truncated.' },
    session_id: { type: 'number', description: 'Session identifier to pass to write_stdin when the process is still running.' },
    wall_time_seconds: { type: 'number', description: 'Elapsed wall time spent waiting for output in seconds.' },
  },
  required: ['output', 'wall_time_seconds'],
};

/**
 * The exec_command spec, byte for byte the reference's: its parameter descriptions, properties in
 * name order (the reference serializes a sorted map); `login` is offered only when login shells
 * are allowed.
 */
export function execCommandSpec(options: { allowLoginShell: boolean; background?: boolean }): FunctionToolSpec {
  const properties: Record<string, JsonSchema> = {
    cmd: { type: 'string', description: 'Shell command to execute.' },
    justification: { type: 'string', description: 'User-facing approval question for `require_escalated`; omit otherwise.' },
    ...(options.allowLoginShell ? { login: { type: 'boolean', description: 'True runs the shell with -l/-i semantics; false disables them. Defaults to true.' } } : {}),
    max_output_tokens: { type: 'number', description: 'Output token budget. Defaults to 10000 tokens; larger requests may be capped by policy.' },
    prefix_rule: {
      type: 'array',
      description: 'Reusable approval prefix for `cmd`, only with `sandbox_permissions: "require_escalated"`; for example ["git", "pull"].',
      items: { type: 'string' },
    },
    sandbox_permissions: {
      type: 'string',
      description: 'Per-command sandbox override. Defaults to `use_default`; use `require_escalated` for unsandboxed execution.',
      enum: ['use_default', 'require_escalated'],
    },
    shell: { type: 'string', description: "Shell binary to launch. Defaults to the user's default shell." },
    tty: { type: 'boolean', description: 'True allocates a PTY for the command; false or omitted uses plain pipes.' },
    workdir: { type: 'string', description: 'Working directory for the command. Defaults to the turn cwd.' },
    yield_time_ms: { type: 'number', description: 'Wait before yielding output. Defaults to 10000 ms; effective range is 250-30000 ms.' },
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

/** The write_stdin spec, byte for byte the reference's. */
export function writeStdinSpec(): FunctionToolSpec {
  return {
    type: 'function',
    name: 'write_stdin',
    description: WRITE_STDIN_DESCRIPTION,
    strict: false,
    parameters: {
      type: 'object',
      properties: {
        chars: { type: 'string', description: 'Bytes to write to stdin. Defaults to empty, which polls without writing.' },
        max_output_tokens: { type: 'number', description: 'Output token budget. Defaults to 10000 tokens; larger requests may be capped by policy.' },
        session_id: { type: 'number', description: 'Identifier of the running unified exec session.' },
        yield_time_ms: {
          type: 'number',
          description: 'Wait before yielding output. Non-empty writes default to 250 ms and cap at 30000 ms; empty polls wait 5000-300000 ms by default.',
        },
      },
      required: ['session_id'],
      additionalProperties: false,
    },
    outputSchema: RESULT_SCHEMA,
  };
}

/**
 * The Rust types the reference deserializes the arguments into; a model's error names them
 * (`invalid type: string "5", expected u64`).
 */
export const EXEC_COMMAND_TYPES = {
  yield_time_ms: 'u64',
  max_output_tokens: 'usize',
  // the reference's enum has a third, feature-gated variant it does not offer in the schema
  sandbox_permissions: { variants: ['use_default', 'require_escalated', 'with_additional_permissions'] },
} as const;
export const WRITE_STDIN_TYPES = { session_id: 'i32', yield_time_ms: 'u64', max_output_tokens: 'usize' } as const;
