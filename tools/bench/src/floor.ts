/**
 * The physical floor of a nested Code Mode call through a worker process, measured in the bench's
 * own run: what no implementation of the runtime protocol can avoid. A nested call has to cross
 * the isolate bridge (the raw isolated-vm bridge call, measured by `rawBridgeRun`), cross to the
 * worker's host process and back (one JSON-line ping-pong with a child process, here), and be
 * dispatched through the registry once (one direct `ToolCallRuntime.handle`, here).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { toolName, type CellHost, type CellToolRequest, type JsonValue, type ToolCall, type ToolPayload } from '@switchyard/protocol';
import { createStepContext, defineFunctionTool } from '@switchyard/kit';
import { ToolCallRuntime, ToolRegistry, createToolRouter } from '@switchyard/registry';

/** The child's side of the ping-pong: parse each line, answer one line. */
const ECHO_CHILD = `
const lines = require('node:readline').createInterface({ input: process.stdin });
lines.on('line', (line) => { const message = JSON.parse(line); process.stdout.write(JSON.stringify({ t: 'call-result', call: message.call, ok: true, value: null }) + '\\n'); });
`;

/** A child process answering JSON lines: `trips(n)` makes n sequential round trips (each message encoded, parsed, answered, parsed). */
export function startPingPong(): { trips(count: number): Promise<void>; close(): void } {
  const child = spawn(process.execPath, ['-e', ECHO_CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  let answer: ((line: string) => void) | undefined;
  lines.on('line', (line) => answer?.(line));
  const trip = (call: number) =>
    new Promise<void>((resolve) => {
      answer = (line) => {
        JSON.parse(line);
        resolve();
      };
      child.stdin!.write(`${JSON.stringify({ t: 'call', call, session: 's', cellId: 'c', runtimeToolCallId: `tool-${call}`, tool: 'noop', input: {} })}\n`);
    });
  return {
    async trips(count) {
      for (let call = 0; call < count; call++) await trip(call);
    },
    close() {
      child.stdin!.end();
      child.kill();
    },
  };
}

/** A registry holding one no-op function tool, and its step runtime. */
function noopRegistry(): { runtime: ToolCallRuntime; call(argumentsJson: string): ToolCall } {
  const tool = defineFunctionTool({
    name: 'noop',
    description: 'Does nothing.',
    parameters: { type: 'object', properties: {} },
    supportsParallelToolCalls: true,
    handle: () => ({}),
  });
  const router = createToolRouter({ specs: [tool.spec], registry: ToolRegistry.from([tool]) });
  const runtime = new ToolCallRuntime({ router, step: createStepContext() });
  let sequence = 0;
  return { runtime, call: (argumentsJson) => ({ toolName: toolName('noop'), callId: `c${++sequence}`, payload: { kind: 'function', arguments: argumentsJson } }) };
}

/** `calls(n)`: n sequential direct registry dispatches of the no-op tool. */
export function directDispatch(): { calls(count: number): Promise<void> } {
  const { runtime, call } = noopRegistry();
  return {
    async calls(count) {
      for (let i = 0; i < count; i++) await runtime.handle(call('{}'));
    },
  };
}

/**
 * A cell host whose nested calls are dispatched through a registry (the no-op tool) as Code Mode's
 * broker does: the arguments' JSON text goes to the registry as it came, the result's JSON text
 * back as the output holds it.
 */
export function registryHost(): CellHost {
  const { runtime, call } = noopRegistry();
  const run = async (request: CellToolRequest) => {
    const toolCall = call(request.inputJson ?? JSON.stringify(request.input ?? {}));
    const { output } = await runtime.handle(toolCall, { source: { kind: 'code-mode', cellId: request.cellId, runtimeToolCallId: request.runtimeToolCallId }, signal: request.signal });
    return { output, payload: toolCall.payload as ToolPayload };
  };
  return {
    invokeTool: async (request) => {
      const { output, payload } = await run(request);
      return output.codeModeResult(payload) as JsonValue;
    },
    invokeToolJson: async (request) => {
      const { output, payload } = await run(request);
      const json = output.codeModeResultJson?.(payload);
      return json !== undefined ? { json } : { value: output.codeModeResult(payload) };
    },
    notify() {},
    cellClosed() {},
  };
}
