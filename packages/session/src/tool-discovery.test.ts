import { afterAll, describe, expect, it } from 'vitest';
import type { ApprovalRequest, MessageItem, ResponseItem, ToolExecutor } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createHookEngine } from '@switchyard/hooks';
import { createSession } from './session';
import { createScriptedModel } from './testing';
import { configError } from '@switchyard/config/config-error';
import { execItem, outputTranscript } from '@switchyard/test-helpers';

// A Code Mode cell searches the deferred tools and calls what it found in the same cell, through a
// whole session (router, hooks, approvals, broker, runtime); and toolDiscovery: 'conversation'
// keeps every request's tools byte-identical while cells discover tools.

/** Deferred tools of three namespaces, plus noise; each counts its calls. */
function deferredCatalog() {
  const calls: Record<string, number> = {};
  const tool = (namespace: string, name: string, description: string, extra: { needsApproval?: boolean } = {}): ToolExecutor =>
    defineFunctionTool({
      name,
      namespace,
      description,
      exposure: 'deferred',
      parameters: { type: 'object', properties: { city: { type: 'string' }, to: { type: 'string' }, title: { type: 'string' } } },
      ...(extra.needsApproval ? { needsApproval: () => true } : {}),
      handle: ({ args }) => {
        const key = `${namespace}${name}`;
        calls[key] = (calls[key] ?? 0) + 1;
        return { tool: key, args };
      },
    });
  const tools = [
    defineFunctionTool({ name: 'note', description: 'Keeps a note.', parameters: { type: 'object', properties: {} }, handle: () => 'noted' }),
    tool('weather__', 'get_forecast', 'Weather forecast for a city: rain, wind and temperature.', { needsApproval: true }),
    tool('mail__', 'send', 'Sends an email message to a recipient.'),
    tool('calendar__', 'add_event', 'Adds an event to the calendar.'),
    ...['ledger', 'invoice', 'ticket', 'deploy', 'backup'].map((word) => tool('ops__', `${word}_status`, `Reports the ${word} status.`)),
  ];
  return { tools, calls };
}

const answer = (text: string): ResponseItem[] => [{ type: 'message', role: 'assistant', content: text }];

describe('a Code Mode cell finds a deferred tool by search and calls it in the same cell (code-mode-only)', () => {
  const { tools, calls } = deferredCatalog();
  const hookInputs: Array<{ event: string; tool: string; caller: unknown }> = [];
  const hooks = createHookEngine({
    functionHooks: (['PreToolUse', 'PostToolUse'] as const).map((event) => ({
      event,
      run: (input: { tool_name: string; caller?: unknown }) => {
        hookInputs.push({ event, tool: input.tool_name, caller: input.caller });
        return undefined;
      },
    })),
  });
  const approvals: ApprovalRequest[] = [];
  const session = createSession({
    toolMode: 'code-mode-only',
    tools,
    hooks,
    approvals: { requestApproval: async (request) => (approvals.push(request), 'approved') },
  });
  afterAll(() => session.shutdown());

  it('tools.tool_search finds weather__get_forecast, the cell calls it: the handler ran once, hooks fired for both calls, the approval was asked', async () => {
    const model = createScriptedModel([
      [execItem(
        'cell-1',
        `const found = await tools.tool_search({ query: 'weather forecast for a city', limit: 2 });
text(found.tools.map((tool) => tool.name).join(', '));
text(found.tools[0].declaration);
const result = await tools[found.tools[0].name]({ city: 'Porto' });
text(JSON.stringify(result));`,
      )],
      answer('Rain in Porto.'),
    ]);
    const result = await session.runTurn({ model, input: 'Weather in Porto?' });
    const output = result.items.find((item) => item.type === 'custom_tool_call_output');
    expect(outputTranscript(output)).toBe(
      [
        'Script completed',
        'Wall time …',
        'Output:',
        '',
        'weather__get_forecast, mail__send',
        'declare const tools: { weather__get_forecast(args: { city?: string; title?: string; to?: string; }): Promise<unknown>; };',
        '{"tool":"weather__get_forecast","args":{"city":"Porto"}}',
      ].join('\n'),
    );
    expect(calls).toEqual({ weather__get_forecast: 1 });
    const cellCalls = hookInputs.filter((input) => input.tool !== 'exec');
    expect(cellCalls.map(({ event, tool }) => `${event} ${tool}`)).toEqual([
      'PreToolUse tool_search',
      'PostToolUse tool_search',
      'PreToolUse weather__get_forecast',
      'PostToolUse weather__get_forecast',
    ]);
    for (const input of cellCalls) expect(input.caller).toMatchObject({ kind: 'code-mode', cell_id: expect.any(String) });
    expect(approvals).toHaveLength(1);
    expect(approvals[0]).toMatchObject({ kind: 'tool' });
    // code-mode-only: the model saw exec and wait, never the deferred tools, and no tool_search of its own
    for (const request of model.requests) expect(request.tools.map((tool) => (tool as { name?: string }).name)).toEqual(['exec', 'wait']);
    expect(JSON.stringify(model.requests[0].tools)).toContain('await tools.tool_search({ query, limit })');
  });

  it('an exact name finds its tool first, where BM25 alone ties five tools and answers the first', async () => {
    const model = createScriptedModel([
      [execItem('cell-2', `const { tools: found } = await tools.tool_search({ query: 'ledger invoice ticket deploy backup status ops__backup_status', limit: 1 }); text(found.map((tool) => tool.name).join());`)],
      answer('ok'),
    ]);
    const result = await session.runTurn({ model, input: 'Backups?' });
    expect(outputTranscript(result.items.find((item) => item.type === 'custom_tool_call_output'))).toBe('Script completed\nWall time …\nOutput:\n\nops__backup_status');
  });
});

/** The 10-step turn: 9 cells, 3 of which discover a new tool (one searches again for a known one), then an answer. */
function tenStepScript(): ResponseItem[][] {
  return [
    [execItem('c1', `const r = await tools.tool_search({ query: 'weather forecast', limit: 1 }); text(r.tools[0].name);`)],
    [execItem('c2', `text(JSON.stringify(await tools.weather__get_forecast({ city: 'Oslo' })));`)],
    [execItem('c3', `const r = await tools.tool_search({ query: 'send an email', limit: 1 }); text(r.tools[0].name);`)],
    [execItem('c4', `text(await tools.note({}));`)],
    [execItem('c5', `const r = await tools.tool_search({ query: 'weather forecast', limit: 1 }); text(r.tools[0].name);`)],
    [execItem('c6', `const r = await tools.tool_search({ query: 'calendar event', limit: 1 }); text(r.tools[0].name);`)],
    [execItem('c7', `text(JSON.stringify(await tools.calendar__add_event({ title: 'standup' })));`)],
    [execItem('c8', `text('thinking');`)],
    [execItem('c9', `text(JSON.stringify(await tools.mail__send({ to: 'a@example.com' })));`)],
    answer('All done.'),
  ];
}

async function tenStepTurn(toolDiscovery: 'tools' | 'conversation' | undefined) {
  const { tools, calls } = deferredCatalog();
  const session = createSession({
    toolMode: 'code-mode-only',
    tools,
    approvals: { requestApproval: async () => 'approved' },
    ...(toolDiscovery ? { toolDiscovery } : {}),
    codeMode: { runtimeOptions: { isolation: 'in-process' } },
  });
  try {
    const model = createScriptedModel(tenStepScript());
    const result = await session.runTurn({ model, input: 'Plan my day.' });
    return { model, result, calls, history: [...session.history] };
  } finally {
    await session.shutdown();
  }
}

const discoveryMessages = (items: readonly ResponseItem[]) =>
  items.filter((item): item is MessageItem => item.type === 'message' && item.role === 'developer' && String(item.content).startsWith('<tools_found>'));

describe("toolDiscovery: 'conversation' keeps the request's tools byte-identical", () => {
  it('every request of a 10-step turn with 3 discoveries carries the same tools; each discovery arrives once, as a developer message after its cell\'s output', async () => {
    const { model, result, calls } = await tenStepTurn('conversation');
    expect(result.steps).toBe(10);
    expect(model.requests).toHaveLength(10);
    const tables = new Set(model.requests.map((request) => JSON.stringify(request.tools)));
    expect(tables.size).toBe(1);
    expect(calls).toEqual({ weather__get_forecast: 1, calendar__add_event: 1, mail__send: 1 });
    // the last request's input: each discovery right after the output of the cell that made it
    const input = model.requests[9].input;
    const found = discoveryMessages(input);
    expect(found.map((message) => /### `(\w+)`/.exec(String(message.content))?.[1])).toEqual(['weather__get_forecast', 'mail__send', 'calendar__add_event']);
    for (const [message, callId] of [[found[0], 'c1'], [found[1], 'c3'], [found[2], 'c6']] as const) {
      const before = input[input.indexOf(message) - 1] as { type: string; call_id?: string };
      expect(before).toMatchObject({ type: 'custom_tool_call_output', call_id: callId });
    }
    expect(String(found[0].content)).toBe(
      [
        '<tools_found>',
        'Nested tools found with `tools.tool_search`; they are on `tools` in every later `exec` cell:',
        '',
        '### `weather__get_forecast`',
        'Weather forecast for a city: rain, wind and temperature.',
        '```ts',
        'declare const tools: { weather__get_forecast(args: { city?: string; title?: string; to?: string; }): Promise<unknown>; };',
        '```',
        '</tools_found>',
      ].join('\n'),
    );
    // each request's input extends the one before it: the cached prefix is everything sent before
    for (let index = 1; index < 10; index++) {
      const previous = model.requests[index - 1].input;
      expect(model.requests[index].input.slice(0, previous.length)).toEqual(previous);
    }
  });

  it('the next turn keeps the same tools too, calls the tool found a turn earlier, and announces nothing again', async () => {
    const { tools, calls } = deferredCatalog();
    const session = createSession({ toolMode: 'code-mode-only', tools, approvals: { requestApproval: async () => 'approved' }, toolDiscovery: 'conversation', codeMode: { runtimeOptions: { isolation: 'in-process' } } });
    try {
      const first = createScriptedModel([[execItem('t1', `const r = await tools.tool_search({ query: 'send an email', limit: 1 }); text(r.tools[0].name);`)], answer('found it')]);
      await session.runTurn({ model: first, input: 'Find the mail tool.' });
      const second = createScriptedModel([
        [execItem('t2', `const r = await tools.tool_search({ query: 'send an email', limit: 1 }); text(JSON.stringify(await tools[r.tools[0].name]({ to: 'b@example.com' })));`)],
        answer('sent'),
      ]);
      const result = await session.runTurn({ model: second, input: 'Mail Bea.' });
      expect(outputTranscript(result.items.find((item) => item.type === 'custom_tool_call_output'))).toBe('Script completed\nWall time …\nOutput:\n\n{"tool":"mail__send","args":{"to":"b@example.com"}}');
      const tables = new Set([...first.requests, ...second.requests].map((request) => JSON.stringify(request.tools)));
      expect(tables.size).toBe(1);
      expect(calls).toEqual({ mail__send: 1 });
      // the first turn's discovery is in the history once; the second search found nothing new
      expect(discoveryMessages(second.requests[1].input)).toHaveLength(1);
      expect(discoveryMessages(session.history)).toHaveLength(1);
    } finally {
      await session.shutdown();
    }
  });

  it("with 'tools' (the default) the same turn changes the exec description after each discovery: 4 distinct tables", async () => {
    const { model, history } = await tenStepTurn(undefined);
    const tables = model.requests.map((request) => JSON.stringify(request.tools));
    expect(new Set(tables).size).toBe(4);
    // requests 2, 4 and 7 (after c1, c3 and c6) are where the table changes
    expect(tables.map((table, index) => (index === 0 || table !== tables[index - 1] ? index + 1 : 0)).filter(Boolean)).toEqual([1, 2, 4, 7]);
    expect(tables[9]).toContain('### `calendar__add_event`');
    expect(tables[0]).not.toContain('### `weather__get_forecast`');
    expect(discoveryMessages(history)).toEqual([]);
  });
});

describe('options', () => {
  it('toolDiscovery and toolSearch are checked by name', async () => {
    expect(await configError(() => createSession({ tools: [], toolDiscovery: 'chat' as never }))).toMatch(/^createSession: option `toolDiscovery` must be one of "tools", "conversation"/);
    expect(await configError(() => createSession({ tools: [], toolSearch: { limit: 0 } }))).toBe('createSession: option `toolSearch.limit` must be an integer ≥ 1; got 0');
    expect(await configError(() => createSession({ tools: [], toolSearch: { serch: () => [] } as never }))).toBe(
      'createSession: unknown option `toolSearch.serch`; did you mean `toolSearch.search`?',
    );
  });
});
