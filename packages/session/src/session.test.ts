import { describe, expect, it } from 'vitest';
import { FatalToolError, ModelRequestError, type HookRunner, type ResponseItem, type ToolExecutor } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import type { ToolPlan } from '@switchyard/planner';
import { createScriptedModel } from './testing';
import { createSession } from './session';
import { workerChildren } from '@switchyard/config/proc';
import { callItem, say, until } from '@switchyard/test-helpers';


function sleeper(name: string, log: string[]): ToolExecutor {
  return defineFunctionTool({
    name,
    description: `Sleeps then answers ${name}.`,
    parameters: { type: 'object', properties: { ms: { type: 'number' } }, required: ['ms'] },
    supportsParallelToolCalls: true,
    async handle({ args, signal }) {
      log.push(`start ${name}`);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, args.ms as number);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error('aborted'));
        });
      });
      log.push(`end ${name}`);
      return `${name} done`;
    },
  });
}


describe('session turn loop', () => {
  it('records outputs in call order when calls finish out of order, then follows up', async () => {
    const log: string[] = [];
    const session = createSession({ tools: [sleeper('slow', log), sleeper('fast', log)] });
    const model = createScriptedModel([[callItem('c1', 'slow', { ms: 150 }), callItem('c2', 'fast', { ms: 10 })], [say('all done')]]);
    const result = await session.runTurn({ model, input: 'go' });
    expect(log).toEqual(['start slow', 'start fast', 'end fast', 'end slow']);
    const outputs = result.items.filter((item) => item.type === 'function_call_output');
    expect(outputs).toEqual([
      { type: 'function_call_output', call_id: 'c1', output: 'slow done' },
      { type: 'function_call_output', call_id: 'c2', output: 'fast done' },
    ]);
    expect(result.finalText).toBe('all done');
    expect(result.steps).toBe(2);
    // the follow-up request carries the outputs in call order
    const second = model.requests[1].input.slice(-2);
    expect(second.map((item) => (item as { call_id: string }).call_id)).toEqual(['c1', 'c2']);
    await session.shutdown();
  });

  it('a retried sampling request reuses the same plan object; a follow-up step rebuilds it', async () => {
    const session = createSession({ tools: [sleeper('t', [])] });
    const plans: Array<{ attempt: number; stepIndex: number; plan: ToolPlan }> = [];
    session.on('model-request', (event) => plans.push({ attempt: event.attempt, stepIndex: event.stepIndex, plan: event.plan }));
    const model = createScriptedModel([
      new ModelRequestError('overloaded', { retryable: true, status: 429 }),
      [callItem('c1', 't', { ms: 1 })],
      [say('ok')],
    ]);
    await session.runTurn({ model, input: 'hi' });
    expect(plans.map((p) => [p.stepIndex, p.attempt])).toEqual([
      [1, 1],
      [1, 2],
      [2, 1],
    ]);
    expect(plans[1].plan).toBe(plans[0].plan);
    expect(plans[2].plan).not.toBe(plans[0].plan);
    expect(JSON.stringify(plans[2].plan.tools)).toBe(JSON.stringify(plans[0].plan.tools));
  });

  it('each session owns its plan cache: its steps reuse their tool_search, another session never gets it', async () => {
    const tools = [sleeper('t', []), defineFunctionTool({ name: 'archive', namespace: 'mail', description: 'Archives mail.', exposure: 'deferred', parameters: { type: 'object' }, handle: () => 'ok' })];
    const searchesOf = async () => {
      const session = createSession({ tools, provider: { toolSearch: true } });
      const searches: unknown[] = [];
      session.on('step-start', (event) => searches.push(event.plan.executors.find((executor) => executor.spec.type === 'tool_search')));
      await session.runTurn({ model: createScriptedModel([[callItem('c1', 't', { ms: 1 })], [say('ok')]]), input: 'hi' });
      await session.shutdown();
      return searches;
    };
    const [first, second] = [await searchesOf(), await searchesOf()];
    expect(first).toHaveLength(2);
    expect(first[0]).toBeDefined();
    expect(first[1]).toBe(first[0]);
    expect(second[1]).toBe(second[0]);
    expect(second[0]).not.toBe(first[0]);
  });

  it('a non-retryable model error and a fatal tool error end the turn with a clear error', async () => {
    const fatal = defineFunctionTool({ name: 'boom', description: 'd', parameters: { type: 'object' }, handle: () => { throw new FatalToolError('disk on fire'); } });
    const session = createSession({ tools: [fatal] });
    await expect(session.runTurn({ model: createScriptedModel([new ModelRequestError('bad request: no such model', { retryable: false, status: 400 })]), input: 'x' })).rejects.toMatchObject({
      message: 'bad request: no such model',
    });
    await expect(session.runTurn({ model: createScriptedModel([[callItem('f1', 'boom', {})], [say('never')]]), input: 'x' })).rejects.toMatchObject({
      code: 'FATAL',
      message: 'disk on fire',
    });
  });

  it('hook additional context arrives in the next request as a developer message', async () => {
    const hooks: HookRunner = {
      async runPreToolUse() {
        return { blocked: false, additionalContexts: ['pre: remember the style guide'] };
      },
      async runPostToolUse() {
        return { additionalContexts: [] };
      },
    };
    const session = createSession({ tools: [sleeper('t', [])], hooks });
    const model = createScriptedModel([[callItem('c1', 't', { ms: 1 })], [say('ok')]]);
    await session.runTurn({ model, input: 'x' });
    expect(model.requests[1].input).toContainEqual({ type: 'message', role: 'developer', content: '<hook_context>pre: remember the style guide</hook_context>' });
  });

  it('cancelling the turn aborts a running tool with the aborted output', async () => {
    const log: string[] = [];
    const session = createSession({ tools: [sleeper('long', log)] });
    const turn = session.beginTurn();
    const step = await turn.step();
    const pending = step.dispatch(callItem('c9', 'long', { ms: 10_000 }));
    await until(() => log.includes('start long'), 'the tool to start');
    const started = Date.now();
    turn.abort();
    const output = await pending;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(output).toMatchObject({ type: 'function_call_output', call_id: 'c9' });
    expect((output as { output: string }).output).toMatch(/^aborted by user after \d+\.\ds$/);
    expect(log).toEqual(['start long']);
    await turn.end();
  });

  it('step.tools, step.plan and dispatchAll expose the two tables', async () => {
    const session = createSession({ tools: [sleeper('a', []), sleeper('b', [])], provider: { namespaceTools: true } });
    const turn = session.beginTurn();
    const step = await turn.step();
    expect(step.tools.map((tool) => (tool as { name: string }).name)).toEqual(['a', 'b']);
    expect(step.plan.describe().map((row) => row.name)).toEqual(['a', 'b']);
    const outs = await step.dispatchAll([callItem('x1', 'b', { ms: 30 }), callItem('x2', 'a', { ms: 1 }), callItem('x3', 'nope', {})]);
    expect(outs).toEqual([
      { type: 'function_call_output', call_id: 'x1', output: 'b done' },
      { type: 'function_call_output', call_id: 'x2', output: 'a done' },
      { type: 'function_call_output', call_id: 'x3', output: 'unsupported call: nope' },
    ]);
    await turn.end();
  });

  it('context usage from model responses feeds the next step context', async () => {
    const seen: Array<number | undefined> = [];
    const probe = defineFunctionTool({
      name: 'probe',
      description: 'd',
      parameters: { type: 'object' },
      handle: ({ invocation }) => {
        seen.push(invocation.step.contextWindow?.usedTokens);
        return 'ok';
      },
    });
    const session = createSession({ tools: [probe], model: { contextWindow: 10_000 } });
    const usage = () => ({ inputTokens: 2000, outputTokens: 500, totalTokens: 2500 });
    const model = createScriptedModel([[callItem('p1', 'probe', {})], [callItem('p2', 'probe', {})], [say('done')]], { usage });
    await session.runTurn({ model, input: 'x' });
    expect(seen).toEqual([0, 2500]);
  });

  it('calls each distinct executor lifecycle function once: onTurnEnd per turn, dispose at shutdown', async () => {
    const ended: string[] = [];
    let disposed = 0;
    const lifecycle = { onTurnEnd: (turnId: string) => void ended.push(turnId), dispose: () => void disposed++ };
    const a = { ...sleeper('a', []), ...lifecycle };
    const b = { ...sleeper('b', []), ...lifecycle };
    const broken = { ...sleeper('c', []), onTurnEnd: () => { throw new Error('broken plugin'); } };
    const session = createSession({ tools: [a, b, broken] });
    const result = await session.runTurn({ model: createScriptedModel([[say('hi')]]), input: 'x' });
    expect(result.finalText).toBe('hi');
    const turn = session.beginTurn();
    await turn.end();
    expect(ended).toHaveLength(2);
    expect(ended[1]).toBe(turn.id);
    await session.shutdown();
    await session.shutdown();
    expect(disposed).toBe(1);
  });
});

describe('Code Mode cells run in worker processes by default', () => {
  it('a spinning cell runs outside this process; session.shutdown() ends it and leaves no worker behind', async () => {
    const before = new Set(workerChildren());
    // its own pool (not shared with other sessions of this test process), so its workers are known
    const session = createSession({ toolMode: 'code-mode-only', tools: [], codeMode: { runtimeOptions: { workers: { shared: false } } } });
    const step = await session.beginTurn().step();
    const spinning = await step.dispatch({ type: 'custom_tool_call', call_id: 'e1', name: 'exec', input: `text('spin'); yield_control(); while (true) {}` });
    expect(JSON.stringify(spinning)).toMatch(/Script running with cell ID/);
    const mine = workerChildren().filter((pid) => !before.has(pid));
    expect(mine.length).toBeGreaterThanOrEqual(1);
    await session.shutdown();
    for (const pid of mine) expect(workerChildren()).not.toContain(pid);
  });
});
