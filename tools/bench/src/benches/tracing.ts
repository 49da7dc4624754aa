/**
 * What tracing costs: the same session work with no tracer, with a no-op tracer (the API's
 * default when no SDK is registered) and with a recording tracer (the SDK's BasicTracerProvider,
 * a SimpleSpanProcessor and an in-memory exporter), sampled in alternation in one run.
 */
import { trace, type Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession, type Session } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { alternatingMedians, compare, median, type Bench } from '../harness';

const DISPATCHES = 2_000;
const TURNS = 100;

/**
 * Median CPU time (ms, process.cpuUsage: every thread, GC included) of each function, sampled in
 * alternation. CPU time rather than wall time: on the shared 2-core machine wall time mostly
 * measures the other engineers' load, while the CPU a dispatch burns is what tracing adds.
 */
async function alternatingCpuMedians(fns: ReadonlyArray<() => Promise<unknown>>, runs: number, warmup: number): Promise<number[]> {
  const samples: number[][] = fns.map(() => []);
  const timed = fns.map((fn, index) => async () => {
    const before = process.cpuUsage();
    await fn();
    const used = process.cpuUsage(before);
    samples[index].push((used.user + used.system) / 1000);
  });
  await alternatingMedians(timed, runs, warmup);
  return samples.map((list) => median(list.slice(warmup)));
}
const CALLS_PER_TURN = 10;

const noop = defineFunctionTool({
  name: 'noop',
  description: 'Does nothing.',
  parameters: { type: 'object', properties: { n: { type: 'number' } } },
  supportsParallelToolCalls: true,
  handle: ({ args }) => ({ n: (args.n as number | undefined) ?? 0 }),
});
const call = (i: number): ResponseItem => ({ type: 'function_call', call_id: `c${i}`, name: 'noop', arguments: `{"n":${i}}` });

const bench: Bench = {
  name: 'tracing',
  async run() {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const variants: Array<{ label: string; tracer?: Tracer }> = [
      { label: 'no tracer' },
      // no global provider is registered in the bench process: this is the API's no-op tracer
      { label: 'no-op tracer', tracer: trace.getTracer('bench') },
      { label: 'recording tracer', tracer: provider.getTracer('bench') },
    ];
    const sessions: Session[] = variants.map(({ tracer }) => createSession({ tools: [noop], ...(tracer ? { tracer } : {}) }));
    const items = Array.from({ length: DISPATCHES }, (_, i) => call(i));
    const turnScript = [Array.from({ length: CALLS_PER_TURN }, (_, i) => call(i)), [{ type: 'message', role: 'assistant', content: 'ok' } as ResponseItem]];

    const dispatches = (session: Session) => async () => {
      const turn = session.beginTurn();
      const step = await turn.step();
      for (const item of items) await step.dispatch(item);
      await turn.end();
      exporter.reset();
    };
    // a fresh session per run: the history (sent whole with every request) stays the same size
    const turns = (tracer: Tracer | undefined) => async () => {
      const session = createSession({ tools: [noop], ...(tracer ? { tracer } : {}) });
      for (let i = 0; i < TURNS; i++) await session.runTurn({ model: createScriptedModel(turnScript), input: 'go' });
      await session.shutdown();
      exporter.reset();
    };

    const dispatchMs = await alternatingCpuMedians(sessions.map(dispatches), 21, 3);
    const turnMs = await alternatingCpuMedians(variants.map(({ tracer }) => turns(tracer)), 21, 3);
    for (const session of sessions) await session.shutdown();
    await provider.shutdown();

    const perDispatch = (ms: number) => (ms * 1000) / DISPATCHES;
    const perTurn = (ms: number) => ms / TURNS;
    const base = { dispatch: { name: 'no tracer', value: perDispatch(dispatchMs[0]) }, turn: { name: 'no tracer', value: perTurn(turnMs[0]) } };
    return [
      compare('session dispatch, no-op tracer', perDispatch(dispatchMs[1]), 'µs', base.dispatch, { note: `CPU time per call, ${DISPATCHES} sequential step.dispatch, median of 21 alternating runs` }),
      compare('session dispatch, recording tracer', perDispatch(dispatchMs[2]), 'µs', base.dispatch, { note: 'SDK BasicTracerProvider + SimpleSpanProcessor + InMemorySpanExporter' }),
      compare('runTurn (10 calls + answer), no-op tracer', perTurn(turnMs[1]), 'ms', base.turn, { note: `CPU time per turn, ${TURNS} turns per run, scripted model, 2 chat + 10 execute_tool + 1 invoke_agent spans each` }),
      compare('runTurn (10 calls + answer), recording tracer', perTurn(turnMs[2]), 'ms', base.turn),
    ];
  },
};

export default bench;
