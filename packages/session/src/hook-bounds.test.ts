import { describe, expect, it } from 'vitest';
import type { FunctionCallOutputItem, ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createHookEngine, type FunctionHookRegistration } from '@switchyard/hooks';
import { createScriptedModel } from './testing';
import { createSession } from './session';

const TWENTY_MI = 20 * 1024 * 1024;

/** A tool answering 20 Mi characters: past the hook input bound of 16 Mi characters. */
const big = defineFunctionTool({
  name: 'big_read',
  description: 'Reads a big file.',
  parameters: { type: 'object', properties: {} },
  handle: () => 'x'.repeat(TWENTY_MI),
});

/** The output item of one direct call of `big_read` in a session whose hook engine has `functionHooks`. */
async function bigOutput(functionHooks: FunctionHookRegistration[]): Promise<{ output: string; preRuns: number }> {
  let preRuns = 0;
  const hooks = createHookEngine({ functionHooks: functionHooks.map((hook) => ({ ...hook, run: (input, options) => (hook.event === 'PreToolUse' && preRuns++, hook.run(input, options)) })) });
  const session = createSession({ tools: [big], hooks });
  const call: ResponseItem = { type: 'function_call', call_id: 'c1', name: 'big_read', arguments: '{}' };
  const result = await session.runTurn({ model: createScriptedModel([[call], [{ type: 'message', role: 'assistant', content: 'done' }]]), input: 'read it' });
  await session.shutdown();
  const item = result.items.find((entry): entry is FunctionCallOutputItem => entry.type === 'function_call_output' && entry.call_id === 'c1');
  return { output: typeof item?.output === 'string' ? item.output : JSON.stringify(item?.output), preRuns };
}

// The 16 Mi-character bound exists because a PostToolUse hook must read the whole output; an output
// no PostToolUse hook reads is not bounded by it.
describe('the hook input bound applies to an output only when a PostToolUse hook reads it', () => {
  it('a PreToolUse-only engine passes a 20 Mi-character result whole', async () => {
    const { output, preRuns } = await bigOutput([{ event: 'PreToolUse', run: () => undefined }]);
    expect(preRuns).toBe(1);
    expect(output.length).toBe(TWENTY_MI);
    expect(output).toBe('x'.repeat(TWENTY_MI));
  });

  it('a PostToolUse hook matching another tool does not bound it either', async () => {
    const { output } = await bigOutput([{ event: 'PostToolUse', matcher: 'Bash', run: () => undefined }]);
    expect(output.length).toBe(TWENTY_MI);
  });

  it('a PostToolUse hook matching the tool (by its name) still withholds what it cannot be given', async () => {
    const { output } = await bigOutput([{ event: 'PostToolUse', matcher: 'big_read', run: () => undefined }]);
    expect(output).toBe(`the output of big_read was withheld: it cannot be checked by PostToolUse hooks: it is larger than ${16 * 1024 * 1024} characters`);
  });
});
