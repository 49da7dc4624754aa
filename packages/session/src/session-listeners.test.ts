import { describe, expect, it } from 'vitest';
import type { ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createScriptedModel } from './testing';
import { createSession } from './session';

/** Collects the process warnings `action` causes (delivered asynchronously). */
async function warningsDuring(action: () => Promise<void>): Promise<Array<{ code?: string; message: string }>> {
  const warnings: Array<{ code?: string; message: string }> = [];
  const onWarning = (warning: Error & { code?: string }) => warnings.push({ code: warning.code, message: warning.message });
  process.on('warning', onWarning);
  try {
    await action();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  return warnings;
}

const echo = defineFunctionTool({
  name: 'echo',
  description: 'Echoes.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  handle: ({ args }) => `echo: ${args.text as string}`,
});
const call: ResponseItem = { type: 'function_call', call_id: 'c1', name: 'echo', arguments: '{"text":"hi"}' };
const answer: ResponseItem = { type: 'message', role: 'assistant', content: 'done' };

describe('session listeners are guarded', () => {
  it('a throwing model-item listener neither ends the turn nor is swallowed: it is a SWITCHYARD_LISTENER warning', async () => {
    const session = createSession({ tools: [echo] });
    const marker = `model-item listener broke ${Math.random()}`;
    let later = 0;
    session.on('model-item', () => {
      throw new Error(marker);
    });
    session.on('model-item', () => later++);
    let finalText: string | undefined;
    const warnings = await warningsDuring(async () => {
      finalText = (await session.runTurn({ model: createScriptedModel([[call], [answer]]), input: 'go' })).finalText;
    });
    expect(finalText).toBe('done');
    expect(later).toBe(2); // the listener after the broken one still heard both items
    expect(session.history.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_output', 'message']);
    expect(warnings).toContainEqual({ code: 'SWITCHYARD_LISTENER', message: `a session listener for "model-item" threw: ${marker}` });
    await session.shutdown();
  });

  it('a throwing tool-call-end listener is reported, and the call output is what the tool returned', async () => {
    const session = createSession({ tools: [echo] });
    const marker = `tool-call-end listener broke ${Math.random()}`;
    session.on('tool-call-end', () => {
      throw new Error(marker);
    });
    const warnings = await warningsDuring(async () => {
      await session.runTurn({ model: createScriptedModel([[call], [answer]]), input: 'go' });
    });
    expect(session.history[2]).toEqual({ type: 'function_call_output', call_id: 'c1', output: 'echo: hi' });
    expect(warnings).toContainEqual({ code: 'SWITCHYARD_LISTENER', message: `a session listener for "tool-call-end" threw: ${marker}` });
    await session.shutdown();
  });

  it("a throwing listener on a step's router is reported too (hub \"router\")", async () => {
    const session = createSession({ tools: [echo] });
    const turn = session.beginTurn();
    const step = await turn.step();
    const marker = `router listener broke ${Math.random()}`;
    step.router.on('tool-call-start', () => {
      throw new Error(marker);
    });
    let output: unknown;
    const warnings = await warningsDuring(async () => {
      output = await step.dispatch(call);
    });
    await turn.end();
    expect(output).toEqual({ type: 'function_call_output', call_id: 'c1', output: 'echo: hi' });
    expect(warnings).toContainEqual({ code: 'SWITCHYARD_LISTENER', message: `a router listener for "tool-call-start" threw: ${marker}` });
    await session.shutdown();
  });
});
