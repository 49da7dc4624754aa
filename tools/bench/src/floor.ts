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
import { median } from './harness';

/** The child's side of the ping-pong: parse each line, answer one line. */
const ECHO_CHILD = `
const lines = require('node:readline').createInterface({ input: process.stdin });
lines.on('line', (line) => { const message = JSON.parse(line); process.stdout.write(JSON.stringify({ t: 'call-result', call: message.call, ok: true, value: null }) + '\\n'); });
`;

/** Microseconds per JSON-line round trip to a child process (median of `runs` runs of `trips` sequential trips). */
export async function pipePingPongMicros(trips = 500, runs = 9): Promise<number> {
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
  try {
    const samples: number[] = [];
    for (let run = 0; run < runs + 2; run++) {
      const started = performance.now();
      for (let call = 0; call < trips; call++) await trip(call);
      if (run >= 2) samples.push(((performance.now() - started) * 1000) / trips);
    }
    return median(samples);
  } finally {
    child.stdin!.end();
    child.kill();
  }
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

/** Microseconds per direct registry dispatch of the no-op tool (median of `runs` runs of `calls` sequential calls). */
export async function directDispatchMicros(calls = 2_000, runs = 9): Promise<number> {
  const { runtime, call } = noopRegistry();
  const samples: number[] = [];
  for (let run = 0; run < runs + 2; run++) {
    const started = performance.now();
    for (let i = 0; i < calls; i++) await runtime.handle(call('{}'));
    if (run >= 2) samples.push(((performance.now() - started) * 1000) / calls);
  }
  return median(samples);
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
      return output.codeModeResultJson?.(payload) ?? JSON.stringify(output.codeModeResult(payload));
    },
    notify() {},
    cellClosed() {},
  };
}
