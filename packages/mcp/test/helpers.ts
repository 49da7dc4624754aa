import { fileURLToPath } from 'node:url';
import { displayName, type JsonObject, type ToolExecutor, type ToolOutput, type ToolOutputItem, type ToolPayload } from '@switchyard/protocol';
import { invokeTool } from '@switchyard/registry/testing';
import type { McpStdioServerConfig } from '../src/config';
import type { McpTools } from '../src/mcp-tools';

/** Path of the fixture MCP server (plain ESM, run with `node`). */
export const FIXTURE_SERVER = fileURLToPath(new URL('./fixtures/fixture-server.mjs', import.meta.url));

/**
 * A stdio configuration starting the fixture server with extra environment and options; a 60 s
 * start unless the options say otherwise (on a machine at load 30 the 10 s default timed out).
 */
export function fixtureServer(env: Record<string, string> = {}, options: Partial<McpStdioServerConfig> = {}): McpStdioServerConfig {
  return { command: process.execPath, args: [FIXTURE_SERVER], env, startupTimeoutMs: 60_000, ...options };
}

/** The executor with this flat display name (`mcp__fx__echo`), or a clear failure. */
export function executor(mcp: McpTools, flatName: string): ToolExecutor {
  const found = mcp.executors().find((candidate) => displayName(candidate.name) === flatName);
  if (!found) throw new Error(`no executor ${flatName}; have ${mcp.executors().map((e) => displayName(e.name)).join(', ')}`);
  return found;
}

/**
 * Runs one call through the registry's real dispatch (`invokeTool`), returning the output, the wire
 * item and the payload. A call refused or failed with an error (invalid input, aborted, a thrown
 * refusal) rejects with that model-visible error; a failed MCP result resolves (`output.success` false).
 */
export async function call(
  target: ToolExecutor,
  args: JsonObject | string = {},
  options: { signal?: AbortSignal; callId?: string } = {},
): Promise<{ output: ToolOutput; item: ToolOutputItem; payload: ToolPayload }> {
  const payload: ToolPayload = { kind: 'function', arguments: typeof args === 'string' ? args : JSON.stringify(args) };
  const result = await invokeTool(target, payload, { callId: options.callId ?? 'call-1', signal: options.signal, hooks: false });
  if (result.error) throw result.error;
  return { output: result.output, item: result.item, payload: result.payload };
}

/** The text of a function_call_output whose output is a string. */
export function functionOutputText(item: ToolOutputItem): string {
  if (item.type !== 'function_call_output' || typeof item.output !== 'string') throw new Error(`not a text output: ${JSON.stringify(item)}`);
  return item.output;
}

/** Resolves with the first event of `type` (the test timeout bounds the wait). */
export function nextEvent<T extends 'warning' | 'tools-changed'>(mcp: McpTools, type: T): Promise<unknown> {
  return new Promise((resolve) => {
    const off = mcp.on(type, (event) => {
      off();
      resolve(event);
    });
  });
}
