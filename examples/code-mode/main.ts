/**
 * code-mode: a scripted model writes `exec` cells instead of calling tools one by one. The cells
 * make nested calls (three in parallel with Promise.all, a freeform call, the clock), keep a value
 * with store/load across cells, and yield_control() so the model can `wait` on the cell later.
 * Every nested call goes through the session's one router. Asserts the outputs and exits 0.
 */
import assert from 'node:assert/strict';
import { fixedTimeProvider, type ModelRequest, type ResponseItem, type ToolCallSource } from '@switchyard/protocol';
import { defineFreeformTool, defineFunctionTool } from '@switchyard/kit';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { clockTool } from '@switchyard/tool-clock';

const POPULATION: Record<string, number> = { Oslo: 709_000, Lima: 10_151_000, Pune: 7_276_000 };
const LOOKUP_MS = 300;

/** When each lookup ran, to show that the cell's Promise.all really runs them side by side. */
const lookups: Array<{ city: string; start: number; end: number }> = [];

/** A slow function tool that may run in parallel with itself. */
const lookupCity = defineFunctionTool<{ city: string }>({
  name: 'lookup_city',
  description: 'Population of a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  outputSchema: { type: 'object', properties: { city: { type: 'string' }, population: { type: 'integer' } }, required: ['city', 'population'] },
  supportsParallelToolCalls: true,
  async handle({ args, signal }) {
    const start = Date.now();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, LOOKUP_MS);
      signal.addEventListener('abort', () => (clearTimeout(timer), reject(new Error('aborted'))), { once: true });
    });
    if (!(args.city in POPULATION)) throw new Error(`unknown city ${args.city}`);
    lookups.push({ city: args.city, start, end: Date.now() });
    return { city: args.city, population: POPULATION[args.city] };
  },
});

/** A freeform tool: raw text in, raw text out (a cell passes it a string, not an object). */
const slugify = defineFreeformTool({
  name: 'slugify',
  description: 'Turns a title into a URL slug. Input: the title as plain text.',
  handle: ({ input }) =>
    input
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, ''),
});

const REPORT_CELL = `const cities = await Promise.all(['Oslo', 'Lima', 'Pune'].map((city) => tools.lookup_city({ city })));
const total = cities.reduce((sum, c) => sum + c.population, 0);
text(cities.map((c) => c.city + ': ' + c.population).join('\\n'));
const slug = await tools.slugify('Field Notes: Oslo, Lima & Pune');
const now = await tools.clock__curr_time();
try {
  await tools.lookup_city({ city: 'Atlantis' });
} catch (error) {
  text('refused: ' + (error?.message ?? String(error)));
}
store('report', { slug, total, at: now.iso });
text('stored report ' + slug + ' at ' + now.iso);`;

const FOLLOW_UP_CELL = `const report = load('report');
text('loaded ' + report.slug + ' (' + report.total + ' people)');
yield_control();
const again = await tools.lookup_city({ city: 'Oslo' });
text('after the yield: ' + again.city + ' still has ' + again.population);`;

const exec = (callId: string, input: string): ResponseItem => ({ type: 'custom_tool_call', call_id: callId, name: 'exec', input });

/** The texts of the output item answering `callId` in a request's input. */
function textsOf(request: ModelRequest | undefined, callId: string): string[] {
  const output = request?.input.find((item) => item.type.endsWith('_output') && (item as { call_id?: string }).call_id === callId);
  assert.ok(output, `no output for ${callId}`);
  const body = (output as { output?: unknown }).output;
  if (typeof body === 'string') return [body];
  return (body as Array<{ text?: string }>).map((part) => part.text ?? '');
}

const session = createSession({
  toolMode: 'code-mode-only',
  tools: [lookupCity, slugify, clockTool()],
  time: fixedTimeProvider('2025-03-04T05:06:07Z'),
  model: { contextWindow: 200_000, name: 'scripted' },
});
const sources: Array<{ toolName: string; source: ToolCallSource }> = [];
session.on('tool-call-start', (event) => sources.push({ toolName: event.toolName, source: event.source }));

try {
  let followUpCell = '';
  const model = createScriptedModel([
    [exec('exec-report', REPORT_CELL)],
    [exec('exec-follow-up', FOLLOW_UP_CELL)],
    (request) => {
      // The model reads the cell id from the yielded cell's output and waits on it.
      followUpCell = /Script running with cell ID (\S+)/.exec(textsOf(request, 'exec-follow-up')[0])?.[1] ?? '';
      return [{ type: 'function_call', call_id: 'wait-follow-up', name: 'wait', arguments: JSON.stringify({ cell_id: followUpCell, yield_time_ms: 5_000 }) }];
    },
    [{ type: 'message', role: 'assistant', content: 'Report stored; Oslo checked again after the yield.' }],
  ]);

  const result = await session.runTurn({ model, input: 'Build a population report for Oslo, Lima and Pune.' });

  // In code-mode-only the model sees exec and wait alone; the other tools are reached from cells.
  assert.deepEqual(model.requests[0].tools.map((tool) => (tool as { name: string }).name), ['exec', 'wait']);

  // Cell 1: parallel lookups, a freeform call, the clock, a refused call, a stored value.
  const report = textsOf(model.requests[1], 'exec-report');
  assert.match(report[0], /^Script completed\nWall time \d+\.\d seconds\nOutput:\n$/);
  assert.deepEqual(report.slice(1), [
    'Oslo: 709000\nLima: 10151000\nPune: 7276000',
    'refused: tool lookup_city failed: unknown city Atlantis',
    'stored report field-notes-oslo-lima-pune at 2025-03-04T05:06:07.000Z',
  ]);
  const parallel = lookups.slice(0, 3);
  assert.ok(Math.max(...parallel.map((l) => l.start)) < Math.min(...parallel.map((l) => l.end)), 'the three lookups overlapped');

  // Cell 2: reads the stored value, yields; `wait` observes the same cell finishing.
  const followUp = textsOf(model.requests[2], 'exec-follow-up');
  assert.equal(followUp[0].split('\n')[0], `Script running with cell ID ${followUpCell}`);
  assert.deepEqual(followUp.slice(1), ['loaded field-notes-oslo-lima-pune (18136000 people)']);
  const waited = textsOf(model.requests[3], 'wait-follow-up');
  assert.match(waited[0], /^Script completed\nWall time \d+\.\d seconds\nOutput:\n$/);
  assert.deepEqual(waited.slice(1), ['after the yield: Oslo still has 709000']);

  // Every nested call went through the router with the cell as its caller.
  const nested = sources.filter((entry) => entry.source.kind === 'code-mode');
  assert.deepEqual(
    nested.map((entry) => entry.toolName),
    ['lookup_city', 'lookup_city', 'lookup_city', 'slugify', 'clock__curr_time', 'lookup_city', 'lookup_city'],
  );
  const cells = new Set(nested.map((entry) => (entry.source as { cellId: string }).cellId));
  assert.equal(cells.size, 2);
  assert.ok(cells.has(followUpCell));
  assert.deepEqual(
    sources.filter((entry) => entry.source.kind === 'direct').map((entry) => entry.toolName),
    ['exec', 'exec', 'wait'],
  );
  assert.equal(result.finalText, 'Report stored; Oslo checked again after the yield.');
  assert.equal(result.steps, 4);

  console.log('code-mode: a scripted model writes exec cells');
  console.log(`  model sees: ${model.requests[0].tools.map((tool) => (tool as { name: string }).name).join(', ')}`);
  console.log(`  cell 1 → ${report.slice(1).join(' / ').replace(/\n/g, ', ')}`);
  console.log(`  cell 2 → ${followUp.slice(1).join(' / ')} … yielded as ${followUpCell}`);
  console.log(`  wait   → ${waited.slice(1).join(' / ')}`);
  console.log(`  nested calls: ${nested.map((entry) => `${entry.toolName}@${(entry.source as { runtimeToolCallId: string }).runtimeToolCallId}`).join(', ')}`);
  console.log('code-mode: ok');
} finally {
  await session.shutdown();
}
