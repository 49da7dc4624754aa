import { describe, expect, test } from 'vitest';
import { ExecCommandOutput } from './exec-output';

const fn = { kind: 'function', arguments: '{}' } as const;

describe('ExecCommandOutput', () => {
  test('a finished process: chunk id, wall time with 4 decimals, exit code, output', () => {
    const output = new ExecCommandOutput({ chunkId: 'abc123', wallTimeMs: 1234, exitCode: 0, output: 'hi\n', hookCommand: 'echo hi' });
    expect(output.toResponseItem('call-1', fn)).toEqual({
      type: 'function_call_output',
      call_id: 'call-1',
      output: 'Chunk ID: abc123\nWall time: 1.2340 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nhi\n',
    });
    expect(output.codeModeResult()).toEqual({ chunk_id: 'abc123', wall_time_seconds: 1.234, exit_code: 0, original_token_count: 1, output: 'hi\n' });
    expect(output.success).toBe(true);
    expect(output.postToolUseResponse()).toBe('hi\n');
  });

  test('a running process names its session id, with `Original token count: 0` when it printed nothing; no chunk id prints no Chunk ID line', () => {
    const output = new ExecCommandOutput({ chunkId: '', wallTimeMs: 250, sessionId: 1000, output: '' });
    expect(output.text).toBe('Wall time: 0.2500 seconds\nProcess running with session ID 1000\nOriginal token count: 0\nOutput:\n');
    expect(output.codeModeResult()).toEqual({ wall_time_seconds: 0.25, session_id: 1000, original_token_count: 0, output: '' });
  });

  test('an apply_patch heredoc\'s answer has no token count', () => {
    const output = new ExecCommandOutput({ chunkId: '', wallTimeMs: 0, output: 'Exit code: 0\n', countTokens: false });
    expect(output.text).toBe('Wall time: 0.0000 seconds\nOutput:\nExit code: 0\n');
    expect(output.codeModeResult()).toEqual({ wall_time_seconds: 0, output: 'Exit code: 0\n' });
  });

  test('truncated output reports the original token count and uses the shared truncation', () => {
    const text = Array.from({ length: 400 }, (_, i) => `line ${i}`).join('\n');
    const output = new ExecCommandOutput({ chunkId: 'ffffff', wallTimeMs: 10, exitCode: 1, output: text, maxOutputTokens: 20 });
    const original = Math.ceil(Buffer.byteLength(text) / 4);
    expect(output.text).toMatch(
      new RegExp(`^Chunk ID: ffffff\\nWall time: 0\\.0100 seconds\\nProcess exited with code 1\\nOriginal token count: ${original}\\nOutput:\\nWarning: truncated output \\(original token count: ${original}\\)\\nTotal output lines: 400\\n\\nline 0\\n.*…\\d+ tokens truncated….*line 399$`, 's'),
    );
    expect(output.codeModeResult()).toMatchObject({ original_token_count: original, exit_code: 1 });
  });

  test('a custom payload gets a custom_tool_call_output', () => {
    const output = new ExecCommandOutput({ chunkId: '', wallTimeMs: 0, output: 'x' });
    expect(output.toResponseItem('c', { kind: 'custom', input: '' }).type).toBe('custom_tool_call_output');
  });
});
