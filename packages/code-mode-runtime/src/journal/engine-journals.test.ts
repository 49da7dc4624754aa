import { describe, expect, it } from 'vitest';
import type { CellHost } from '@switchyard/protocol';
import { EngineJournals } from './engine-journals';

/** Journals over a host whose one tool answers `{ n }`, counting its runs. */
function journals() {
  const runs: string[] = [];
  const host: CellHost = {
    invokeTool: async (request) => {
      runs.push(`${request.runtimeToolCallId} ${request.tool} ${request.inputJson}`);
      return { n: runs.length };
    },
    notify: () => undefined,
    cellClosed: () => undefined,
  };
  const engine = new EngineJournals(host, 1_000_000);
  engine.open({ cellId: 'c1', source: 'text(1)', tools: [], stored: [], seed: 'seed' });
  const call = (runtimeToolCallId: string, tool: string, inputJson: string) =>
    engine.hostFor('c1').invokeToolJson!({ cellId: 'c1', runtimeToolCallId, tool, input: JSON.parse(inputJson), inputJson, signal: new AbortController().signal });
  return { call, runs };
}

describe('EngineJournals: a call asked again must be the one its journal has', () => {
  it('answers the same call from the journal; another tool or other arguments under its id is the divergence, and nothing runs', async () => {
    const { call, runs } = journals();
    expect(await call('tool-1', 'a', '{"n":1}')).toEqual({ json: '{"n":1}' });
    expect(await call('tool-1', 'a', '{"n":1}')).toEqual({ json: '{"n":1}' });
    await expect(call('tool-1', 'a', '{"n":2}')).rejects.toBe('cannot resume cell c1: it called tools.a (tool-1) with other arguments than its journal has');
    await expect(call('tool-1', 'b', '{"n":1}')).rejects.toBe('cannot resume cell c1: it called tools.b where its journal has tools.a (tool-1)');
    expect(runs).toEqual(['tool-1 a {"n":1}']);
  });
});
