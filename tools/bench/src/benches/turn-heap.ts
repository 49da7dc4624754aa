/**
 * Heap per turn: a long session's heap grows with its history, and by nothing else. 1,000 turns
 * (each a user message, a call, its output and an answer; direct and Code Mode) after 200 warm-up
 * turns (compiled code and caches settle); the heap after a full collection, per turn, beside the
 * reference: the same items held alone (a `structuredClone` of the 1,000 turns' history items),
 * what the history's own representation costs in V8 (object and string headers, arrays' spare
 * capacity), which is more than its JSON length. `BENCH_TURNS` sets the turn count.
 */
import { defineFunctionTool } from '@switchyard/kit';
import type { ResponseItem } from '@switchyard/protocol';
import { createSession, type Session } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import type { Bench, BenchFigure } from '../harness';

const TURNS = Number(process.env.BENCH_TURNS ?? 1000);
const WARMUP = 200;

const gc = (globalThis as { gc?: () => void }).gc;
function heapUsed(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

function callOf(mode: 'direct' | 'code-mode', n: number): ResponseItem {
  return mode === 'direct'
    ? { type: 'function_call', call_id: `c${n}`, name: 'echo', arguments: `{"x":${n}}` }
    : { type: 'custom_tool_call', call_id: `c${n}`, name: 'exec', input: `text(JSON.stringify(await tools.echo({ x: ${n} })))` };
}

async function turns(session: Session, mode: 'direct' | 'code-mode', from: number, count: number): Promise<void> {
  for (let n = from; n < from + count; n++) {
    const model = createScriptedModel([[callOf(mode, n)], [{ type: 'message', role: 'assistant', content: `done ${n}` }]]);
    await session.runTurn({ model, input: `turn ${n}` });
  }
}

async function measure(mode: 'direct' | 'code-mode'): Promise<BenchFigure> {
  const echo = defineFunctionTool({ name: 'echo', description: 'Echoes x.', parameters: { type: 'object', properties: { x: { type: 'number' } } }, handle: ({ args }) => ({ x: args.x as number }) });
  const session = createSession({ tools: [echo], toolMode: mode, codeMode: { runtimeOptions: { isolation: 'in-process' } } });
  await turns(session, mode, 0, WARMUP);
  const before = heapUsed();
  const start = session.history.length;
  await turns(session, mode, WARMUP, TURNS);
  const grown = heapUsed() - before;
  const added = session.history.slice(start);
  const json = JSON.stringify(added).length;
  const beforeClone = heapUsed();
  const clone = structuredClone(added);
  const own = heapUsed() - beforeClone;
  await session.shutdown();
  return {
    name: `heap growth per turn (${mode}, ${TURNS} turns after ${WARMUP})`,
    value: grown / TURNS,
    unit: 'B',
    reference: { name: "the turns' history items alone", value: own / TURNS },
    ratio: grown / own,
    note: `${clone.length} items, ${(json / TURNS).toFixed(0)} B of JSON per turn; the clone's arrays are exact-size, the history's keep spare capacity`,
  };
}

const bench: Bench = {
  name: 'turn heap',
  async run() {
    if (!gc) throw new Error('turn-heap needs --expose-gc (the bench script passes it)');
    return [await measure('direct'), await measure('code-mode')];
  },
};
export default bench;
