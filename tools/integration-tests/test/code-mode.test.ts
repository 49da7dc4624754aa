import { afterEach, describe, expect, it } from 'vitest';
import { FatalToolError, type ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession, type Session } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { cellIdOf, exec, blockingHooks, say, sleep, sleepTool, texts, useSessions, wait } from './helpers';

const session = useSessions({ toolMode: 'code-mode-only' });

describe('Code Mode through the same router and registry', () => {
  it('a nested call reaches the registry, its pre-hook sees the code-mode caller and can block it', async () => {
    const log: Array<{ name: string; start: number }> = [];
    const hooks = blockingHooks(['forbidden']);
    const forbidden = defineFunctionTool({ name: 'forbidden', description: 'Never allowed.', parameters: { type: 'object' }, handle: () => 'ran anyway' });
    const s = session({ tools: [sleepTool(log), forbidden], hooks });
    const turn = s.beginTurn();
    const step = await turn.step();
    expect(step.tools.map((tool) => (tool as { name: string }).name)).toEqual(['exec', 'wait']);
    const out = await step.dispatch(
      exec('e1', `const r = await tools.nap({ ms: 1, label: 'hello' });\ntext(r.label);\ntry { await tools.forbidden({}); } catch (e) { text('caught: ' + e); }`),
    );
    expect(texts(out).slice(1)).toEqual(['hello', 'caught: Tool call blocked by PreToolUse hook: policy says no. Tool: forbidden']);
    expect(texts(out)[0]).toMatch(/^Script completed\nWall time \d+\.\d seconds\nOutput:\n$/);
    const nested = hooks.pre.filter((request) => request.toolName === 'nap');
    expect(nested).toHaveLength(1);
    expect(nested[0].caller.kind).toBe('code-mode');
    expect((nested[0].caller as { cell_id: string }).cell_id).toMatch(/^[0-9a-hjkmnp-tv-z]{16}$/);
    expect(nested[0].toolInput).toEqual({ ms: 1, label: 'hello' });
    // the outer exec is hooked too, with the direct caller and the code
    const outer = hooks.pre.find((request) => request.toolName === 'exec');
    expect(outer?.caller).toEqual({ kind: 'direct' });
    expect((outer?.toolInput as { code: string }).code).toContain('tools.nap');
    expect(log.map((entry) => entry.name)).toEqual(['hello']);
    await turn.end();
  });

  it('nested parallel calls overlap', async () => {
    const log: Array<{ name: string; start: number; end?: number }> = [];
    const s = session({ tools: [sleepTool(log)] });
    const turn = s.beginTurn();
    const step = await turn.step();
    // timed from a warm runtime: the first exec of a session may wait for its worker process to start
    await step.dispatch(exec('warm', `text('warm')`));
    const started = Date.now();
    const out = await step.dispatch(exec('e1', `const rs = await Promise.all([1,2,3,4,5].map((i) => tools.nap({ ms: 300, label: 'n' + i })));\ntext(rs.map((r) => r.label).join(','));`));
    const elapsed = Date.now() - started;
    expect(texts(out)[1]).toBe('n1,n2,n3,n4,n5');
    expect(elapsed).toBeLessThan(5 * 300);
    const lastStart = Math.max(...log.map((entry) => entry.start));
    const firstEnd = Math.min(...log.map((entry) => entry.end!));
    expect(lastStart).toBeLessThan(firstEnd);
    await turn.end();
  });

  it('yield and resume: a multi-phase wait with the same cell id, then completion closes the cell', async () => {
    const s = session({ tools: [sleepTool([])] });
    const turn = s.beginTurn();
    const step = await turn.step();
    const first = await step.dispatch(exec('e1', `text('phase 1');\nyield_control();\nawait tools.nap({ ms: 200 });\ntext('phase 2');\nyield_control();\nawait tools.nap({ ms: 200 });\ntext('phase 3');`));
    const cellId = cellIdOf(first);
    expect(texts(first).slice(1)).toEqual(['phase 1']);
    const second = await step.dispatch(wait('w1', { cell_id: cellId, yield_time_ms: 5_000 }));
    expect(texts(second)[0]).toBe(`Script running with cell ID ${cellId}\n${texts(second)[0].split('\n')[1]}\nOutput:\n`);
    expect(texts(second).slice(1)).toEqual(['phase 2']);
    const third = await step.dispatch(wait('w2', { cell_id: cellId, yield_time_ms: 5_000 }));
    expect(texts(third)[0]).toMatch(/^Script completed\n/);
    expect(texts(third).slice(1)).toEqual(['phase 3']);
    const gone = await step.dispatch(wait('w3', { cell_id: cellId }));
    expect(gone).toEqual({
      type: 'function_call_output',
      call_id: 'w3',
      output: [
        { type: 'input_text', text: expect.stringMatching(/^Script failed\nWall time \d+\.\d seconds\nOutput:\n$/) },
        { type: 'input_text', text: `Script error:\nexec cell ${cellId} not found` },
      ],
    });
    await turn.end();
  });

  it('a busy loop is yielded by a 100 ms pragma, then terminated', async () => {
    const s = session({ tools: [] });
    const turn = s.beginTurn();
    const step = await turn.step();
    // timed from a warm runtime: the first exec of a session may wait for its worker process to start
    await step.dispatch(exec('warm', `text('warm')`));
    const started = Date.now();
    const first = await step.dispatch(exec('e1', `// @exec: {"yield_time_ms": 100}\ntext('spinning');\nwhile (true) {}`));
    expect(Date.now() - started).toBeLessThan(3_000);
    const cellId = cellIdOf(first);
    expect(texts(first).slice(1)).toEqual(['spinning']);
    const terminated = await step.dispatch(wait('w1', { cell_id: cellId, terminate: true }));
    expect(texts(terminated)).toEqual([expect.stringMatching(/^Script terminated\nWall time \d+\.\d seconds\nOutput:\n$/)]);
    // the session is healthy afterwards
    const next = await step.dispatch(exec('e2', `text(1 + 1)`));
    expect(texts(next).slice(1)).toEqual(['2']);
    await turn.end();
  });

  it('two yielded cells are waited on independently; wait on an unknown cell fails', async () => {
    const s = session({ tools: [sleepTool([])] });
    const turn = s.beginTurn();
    const step = await turn.step();
    const a = cellIdOf(await step.dispatch(exec('ea', `yield_control();\nawait tools.nap({ ms: 300 });\ntext('A done');`)));
    const b = cellIdOf(await step.dispatch(exec('eb', `yield_control();\nawait tools.nap({ ms: 50 });\ntext('B done');`)));
    expect(a).not.toBe(b);
    const doneB = await step.dispatch(wait('wb', { cell_id: b, yield_time_ms: 5_000 }));
    expect(texts(doneB).slice(1)).toEqual(['B done']);
    const doneA = await step.dispatch(wait('wa', { cell_id: a, yield_time_ms: 5_000 }));
    expect(texts(doneA).slice(1)).toEqual(['A done']);
    const unknown = await step.dispatch(wait('wx', { cell_id: 'nope' }));
    expect(texts(unknown)[1]).toBe('Script error:\nexec cell nope not found');
    await turn.end();
  });

  it('pragma budget truncation has the exact format; wait.max_tokens is independent of the pragma', async () => {
    const s = session({ tools: [] });
    const turn = s.beginTurn();
    const step = await turn.step();
    const out = await step.dispatch(exec('e1', `// @exec: {"max_output_tokens": 5}\ntext('a'.repeat(40));\ntext('b'.repeat(40));`));
    expect(texts(out)).toHaveLength(2);
    expect(texts(out)[1]).toBe(`Warning: truncated output (original token count: 21)\nTotal output lines: 2\n\n${'a'.repeat(10)}\u202616 tokens truncated\u2026${'b'.repeat(10)}`);
    const yielded = await step.dispatch(exec('e2', `// @exec: {"max_output_tokens": 1}\nyield_control();\nawait new Promise((r) => setTimeout(r, 100));\ntext('c'.repeat(40));`));
    const cellId = cellIdOf(yielded);
    const waited = await step.dispatch(wait('w1', { cell_id: cellId, yield_time_ms: 5_000, max_tokens: 100 }));
    expect(texts(waited).slice(1)).toEqual(['c'.repeat(40)]);
    await turn.end();
  });

  it('notify() injects a custom_tool_call_output with the exec call id, which the next request carries', async () => {
    const s = session({ tools: [] });
    const model = createScriptedModel([[exec('exec-call-7', `notify('heads up');\ntext('done');`)], [say('thanks')]]);
    await s.runTurn({ model, input: 'go' });
    expect(model.requests[1].input).toContainEqual({ type: 'custom_tool_call_output', call_id: 'exec-call-7', name: 'exec', output: 'heads up' });
  });

  it('cancelling a turn aborts a pending nested call', async () => {
    const log: Array<{ name: string; start: number; aborted?: boolean }> = [];
    const s = session({ tools: [sleepTool(log)] });
    const controller = new AbortController();
    const model = createScriptedModel([[exec('e1', `// @exec: {"yield_time_ms": 20000}\ntry { await tools.nap({ ms: 20000, label: 'long' }); text('finished'); } catch (e) { text('rejected: ' + e); }`)], [say('x')]]);
    const running = s.runTurn({ model, input: 'go', signal: controller.signal });
    const deadline = Date.now() + 30_000;
    while (!log.length && Date.now() < deadline) await sleep(10);
    controller.abort('user pressed stop');
    await expect(running).rejects.toBeTruthy();
    const end = Date.now() + 2_000;
    while (!log[0]?.aborted && Date.now() < end) await sleep(10);
    expect(log).toEqual([expect.objectContaining({ name: 'long', aborted: true })]);
  });

  it('a cell yielded in turn 1 is waited on in turn 2, and a background nested call runs in a later step without any wait', async () => {
    const log: Array<{ name: string; start: number }> = [];
    const s = session({ tools: [sleepTool(log)] });
    let cellId = '';
    const turn1 = createScriptedModel([
      [exec('e1', `store('k', 1);\nyield_control();\nawait new Promise((r) => setTimeout(r, 300));\nconst r = await tools.nap({ ms: 1, label: 'background' });\nstore('k', r.label);\ntext('bg ' + r.label);`)],
      (request) => {
        cellId = cellIdOf(request.input.at(-1) as ResponseItem);
        return [say('yielded')];
      },
    ]);
    await s.runTurn({ model: turn1, input: 'start' });
    expect(cellId).toMatch(/^[0-9a-z]{16}$/);
    // between turns no worker is attached: the nested call queues
    await sleep(600);
    expect(log).toEqual([]);
    const turn2 = createScriptedModel([
      // the model does something unrelated first: the queued nested call runs in this later step
      [exec('e2', `await new Promise((r) => setTimeout(r, 300));\ntext('other');`)],
      [wait('w1', { cell_id: '__CELL__' })].map((item) => ({ ...item, arguments: JSON.stringify({ cell_id: cellId, yield_time_ms: 5_000 }) }) as ResponseItem),
      [say('done')],
    ]);
    const result = await s.runTurn({ model: turn2, input: 'continue' });
    expect(log.map((entry) => entry.name)).toEqual(['background']);
    const waited = result.items.find((item) => (item as { call_id?: string }).call_id === 'w1' && item.type === 'function_call_output');
    expect(texts(waited)[0]).toMatch(/^Script completed\n/);
    expect(texts(waited).slice(1)).toEqual(['bg background']);
  });

  it('two execs created at the same time from two steps each reach their own tools', async () => {
    const log: Array<{ name: string; start: number }> = [];
    const s = session({ tools: [sleepTool(log)] });
    const turn = s.beginTurn();
    const [first, second] = [await turn.step(), await turn.step()];
    const [a, b] = await Promise.all([
      first.dispatch(exec('ea', `text((await tools.nap({ ms: 50, label: 'a' })).label);`)),
      second.dispatch(exec('eb', `text((await tools.nap({ ms: 50, label: 'b' })).label);`)),
    ]);
    expect(texts(a).slice(1)).toEqual(['a']);
    expect(texts(b).slice(1)).toEqual(['b']);
    expect(log.map((entry) => entry.name).sort()).toEqual(['a', 'b']);
    await turn.end();
  });

  it('emits cell-start when exec creates a cell and cell-end when its end is observed', async () => {
    const s = session({ tools: [] });
    const events: Array<{ type: string; cellId: string; status?: string }> = [];
    s.on('cell-start', (event) => events.push({ ...event }));
    s.on('cell-end', (event) => events.push({ ...event }));
    const turn = s.beginTurn();
    const step = await turn.step();
    await step.dispatch(exec('e1', `text('quick');`));
    const spinning = cellIdOf(await step.dispatch(exec('e2', `// @exec: {"yield_time_ms": 100}\nwhile (true) {}`)));
    await step.dispatch(exec('e3', `throw new Error('nope');`));
    expect(events.map((event) => `${event.type}:${event.status ?? ''}`)).toEqual(['cell-start:', 'cell-end:completed', 'cell-start:', 'cell-start:', 'cell-end:failed']);
    await step.dispatch(wait('w1', { cell_id: spinning, terminate: true }));
    await step.dispatch(wait('w2', { cell_id: 'missing-cell' }));
    expect(events.at(-1)).toEqual({ type: 'cell-end', cellId: spinning, status: 'terminated' });
    expect(events.filter((event) => event.cellId === 'missing-cell')).toEqual([]);
    await turn.end();
  });

  it('a cell stopped at a limit: cell-limit-exceeded names it, cell-end carries the error the model saw', async () => {
    const s = session({ tools: [], codeMode: { runtimeOptions: { cpuTimeMs: 200 } } });
    const events: Array<Record<string, unknown>> = [];
    s.on('cell-limit-exceeded', (event) => events.push({ ...event }));
    s.on('cell-end', (event) => events.push({ ...event }));
    const turn = s.beginTurn();
    const step = await turn.step();
    const out = await step.dispatch(exec('e1', `text('spin'); while (true) {}`));
    expect(texts(out).slice(1)).toEqual(['spin', 'Script error:\nexec cell exceeded its CPU time limit of 200 ms']);
    const cellId = events[0]?.cellId;
    expect(cellId).toMatch(/^[0-9a-z]{16}$/);
    expect(events).toEqual([
      { type: 'cell-limit-exceeded', cellId, message: 'exec cell exceeded its CPU time limit of 200 ms' },
      { type: 'cell-end', cellId, status: 'failed', error: 'exec cell exceeded its CPU time limit of 200 ms' },
    ]);
    await turn.end();
  });

  it('a fatal error in a nested call ends the turn, even when the script catches its text', async () => {
    const boom = defineFunctionTool({ name: 'boom', description: 'Fails fatally.', parameters: { type: 'object' }, handle: () => { throw new FatalToolError('the disk is gone'); } });
    const s = session({ tools: [boom] });
    const model = createScriptedModel([[exec('e1', `try { await tools.boom({}); } catch (e) { text('caught: ' + e); }`)], [say('never reached')]]);
    await expect(s.runTurn({ model, input: 'go' })).rejects.toMatchObject({ code: 'FATAL', message: 'the disk is gone' });
    expect(model.requests).toHaveLength(1);
  });
});
