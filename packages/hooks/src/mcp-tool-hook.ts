import { errorMessage, isJsonObject, type JsonObject, type McpToolCaller, type McpToolCallResult } from '@switchyard/protocol';
import { runWithDeadline } from './deadline';
import type { HandlerRunResult } from './hook-output';

/** The part of a configured `mcp_tool` handler the runner reads. */
export interface McpToolHookTarget {
  readonly server: string;
  readonly tool: string;
  readonly timeoutSec: number;
}

/** The text blocks of a result, joined by newlines (other blocks are ignored). */
function resultText(result: McpToolCallResult): string {
  const texts: string[] = [];
  for (const block of result.content) {
    if (isJsonObject(block) && block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
  }
  return texts.join('\n');
}

/**
 * What stands for a command's stdout: the result's `structuredContent` as JSON when it has one
 * (a tool with an output schema answering the hook output object), else its text blocks.
 */
function stdoutOf(result: McpToolCallResult): string {
  return result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : resultText(result);
}

/**
 * Runs an `mcp_tool` hook: calls the tool with the stdin object as its arguments and reads the
 * answer as a command's stdout (exit 0). An error result (`isError`), a server that cannot be
 * reached or dies during the call, an answer past `maxOutputBytes` and the timeout are failed runs.
 * Never rejects.
 */
export function runMcpToolHook(target: McpToolHookTarget, inputJson: string, signal: AbortSignal, settings: { caller: McpToolCaller; maxOutputBytes: number }): Promise<HandlerRunResult> {
  const where = `mcp_tool hook ${target.server}/${target.tool}`;
  return runWithDeadline(
    target.timeoutSec,
    signal,
    async (own) => {
      const result = await settings.caller.callTool({ server: target.server, tool: target.tool, arguments: JSON.parse(inputJson) as JsonObject, signal: own });
      if (result.isError) return { exitCode: null, stdout: '', stderr: '', error: `${where}: the tool answered an error: ${resultText(result).slice(0, 2000) || '(no text)'}` };
      const stdout = stdoutOf(result);
      if (Buffer.byteLength(stdout) > settings.maxOutputBytes) return { exitCode: null, stdout: '', stderr: '', error: `${where}: the answer exceeded ${settings.maxOutputBytes} bytes; output ignored` };
      return { exitCode: 0, stdout, stderr: '' };
    },
    (error) => `${where} failed: ${errorMessage(error)}`,
  );
}
