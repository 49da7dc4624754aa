import { toolName, type ToolCall } from '@switchyard/protocol';
import { createStepContext, defineFunctionTool } from '@switchyard/kit';
import { ToolCallRuntime, ToolRegistry, createToolRouter } from '@switchyard/registry';
import { compare, timeMedian, type Bench } from '../harness';

const CALLS = 2_000;
const BATCH = 100;

/**
 * Direct dispatch throughput without hooks: the whole loop (lookup, payload check, ajv validation,
 * gate, events, handler, wire item) against a bare async call of the same handler, same run.
 */
const bench: Bench = {
  name: 'dispatch',
  async run() {
    const handler = async (args: { n?: number }) => ({ n: args.n ?? 0 });
    const tool = defineFunctionTool({
      name: 'noop',
      description: 'Does nothing.',
      parameters: { type: 'object', properties: { n: { type: 'number' } } },
      supportsParallelToolCalls: true,
      handle: ({ args }) => handler(args as { n?: number }),
    });
    const router = createToolRouter({ specs: [tool.spec], registry: ToolRegistry.from([tool]) });
    const runtime = new ToolCallRuntime({ router, step: createStepContext() });
    const call = (i: number): ToolCall => ({ toolName: toolName('noop'), callId: `c${i}`, payload: { kind: 'function', arguments: `{"n":${i}}` } });
    const calls = Array.from({ length: BATCH }, (_, i) => call(i));

    const bareMs = await timeMedian(async () => {
      for (let i = 0; i < CALLS; i++) await handler(JSON.parse(`{"n":${i}}`));
    });
    const dispatchMs = await timeMedian(async () => {
      for (let i = 0; i < CALLS; i++) await runtime.handle(call(i));
    });
    const bareBatchMs = await timeMedian(async () => {
      for (let round = 0; round < CALLS / BATCH; round++) await Promise.all(calls.map((_, i) => handler(JSON.parse(`{"n":${i}}`))));
    });
    const batchMs = await timeMedian(async () => {
      for (let round = 0; round < CALLS / BATCH; round++) await runtime.dispatchAll(calls);
    });

    const opsPerSecond = (ms: number) => CALLS / (ms / 1000);
    return [
      compare('sequential direct dispatch (no hooks)', opsPerSecond(dispatchMs), 'ops/s', { name: 'bare async call + JSON.parse', value: opsPerSecond(bareMs) }, {
        higherIsBetter: true,
        note: `${CALLS} calls, median of 7 runs`,
      }),
      compare('dispatchAll of parallel-safe calls (no hooks)', opsPerSecond(batchMs), 'ops/s', { name: 'Promise.all of bare async calls', value: opsPerSecond(bareBatchMs) }, {
        higherIsBetter: true,
        note: `batches of ${BATCH}, ${CALLS} calls per run`,
      }),
    ];
  },
};

export default bench;
