import { randomBytes } from 'node:crypto';
import type { JsonObject, JsonValue, ToolOutput, ToolOutputItem, ToolPayload } from '@switchyard/protocol';
import { DEFAULT_OUTPUT_TOKENS, truncateTextOutput } from '@switchyard/kit';
import { previewText } from '@switchyard/kit/internal';

/** What exec_command / write_stdin answered, before formatting. */
export interface ExecResult {
  /** Six hex digits naming this chunk of output; `''` prints no `Chunk ID` line. */
  chunkId: string;
  /** Milliseconds from the call's start to its answer. */
  wallTimeMs: number;
  /** Set when the process has finished. */
  exitCode?: number;
  /** Set while the process is still running (the id `write_stdin` takes). */
  sessionId?: number;
  /** The output collected for this answer, before truncation. */
  output: string;
  /** Token budget for `output`. Default 10 000. */
  maxOutputTokens?: number;
  /** The command the process was started with, as PostToolUse hooks see it; absent for none. */
  hookCommand?: string;
  /** For a write_stdin answer that saw the process finish: the exec_command call that started it. */
  hookCallId?: string;
  /**
   * The command ran in a sandbox and its failure looks like the sandbox stopped it (a non-zero exit
   * with "Read-only file system", "Operation not permitted", …): the output is a failure
   * (`success: false`, `failureCode: 'SANDBOX_DENIED'`) with the same text and Code Mode value.
   */
  sandboxDenied?: boolean;
  /**
   * `false` for an answer that is not a process's output (an `apply_patch` heredoc routed to the
   * apply_patch tool): no `Original token count` line. Default true.
   */
  countTokens?: boolean;
}

/** A new chunk id: six random hex digits. */
export function chunkId(): string {
  return randomBytes(3).toString('hex');
}

/** What a Code Mode cell receives from `tools.exec_command(...)` / `tools.write_stdin(...)`. */
export interface ExecCodeModeResult {
  chunk_id?: string;
  wall_time_seconds: number;
  exit_code?: number;
  session_id?: number;
  /** Token count of the output before truncation; absent only for an `apply_patch` heredoc's answer. */
  original_token_count?: number;
  output: string;
}

/**
 * The output of exec_command and write_stdin. The model reads
 * `Chunk ID: …`, `Wall time: {s:.4} seconds`, `Process exited with code N` or
 * `Process running with session ID N`, `Original token count: N` (always, `0` for a process that
 * printed nothing yet), `Output:` and the token-truncated output. A non-zero exit is data, not a
 * failure (`success` true), except a sandbox denial (`success` false, `failureCode`
 * `SANDBOX_DENIED`, as the reference answers one with a failure); a cell's promise resolves with
 * the same value either way.
 */
export class ExecCommandOutput implements ToolOutput {
  readonly success: boolean;
  readonly failureCode?: 'SANDBOX_DENIED';
  readonly codeModeAlwaysResolves = true as const;
  readonly result: ExecResult;
  private readonly truncated: string;
  private readonly originalTokenCount: number | undefined;

  constructor(result: ExecResult) {
    this.result = result;
    this.success = result.sandboxDenied !== true;
    if (result.sandboxDenied) this.failureCode = 'SANDBOX_DENIED';
    const cut = truncateTextOutput(result.output, result.maxOutputTokens ?? DEFAULT_OUTPUT_TOKENS);
    this.truncated = cut.text;
    this.originalTokenCount = result.countTokens === false ? undefined : cut.originalTokens;
  }

  /** The output after token truncation (what follows `Output:`; PostToolUse hooks' `tool_response`). */
  get truncatedOutput(): string {
    return this.truncated;
  }

  /** The full model-visible text. */
  get text(): string {
    const lines: string[] = [];
    if (this.result.chunkId) lines.push(`Chunk ID: ${this.result.chunkId}`);
    lines.push(`Wall time: ${(this.result.wallTimeMs / 1000).toFixed(4)} seconds`);
    if (this.result.exitCode !== undefined) lines.push(`Process exited with code ${this.result.exitCode}`);
    if (this.result.sessionId !== undefined) lines.push(`Process running with session ID ${this.result.sessionId}`);
    if (this.originalTokenCount !== undefined) lines.push(`Original token count: ${this.originalTokenCount}`);
    lines.push('Output:', this.truncated);
    return lines.join('\n');
  }

  toResponseItem(callId: string, payload: ToolPayload): ToolOutputItem {
    return payload.kind === 'custom'
      ? { type: 'custom_tool_call_output', call_id: callId, output: this.text }
      : { type: 'function_call_output', call_id: callId, output: this.text };
  }

  codeModeResult(): JsonValue {
    const value: ExecCodeModeResult = {
      ...(this.result.chunkId ? { chunk_id: this.result.chunkId } : {}),
      wall_time_seconds: this.result.wallTimeMs / 1000,
      ...(this.result.exitCode !== undefined ? { exit_code: this.result.exitCode } : {}),
      ...(this.result.sessionId !== undefined ? { session_id: this.result.sessionId } : {}),
      ...(this.originalTokenCount !== undefined ? { original_token_count: this.originalTokenCount } : {}),
      output: this.truncated,
    };
    return value as unknown as JsonObject;
  }

  postToolUseResponse(): JsonValue {
    return this.truncated;
  }

  logPreview(): string {
    return previewText(this.text);
  }
}
