import { createHookEngine } from '@switchyard/hooks';
import { defineFreeformTool, defineFunctionTool } from '@switchyard/kit';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { executorsAsAiSdkTools } from './index';
import { textStep, toolCalls } from '../test/mock-steps';


const query = defineFunctionTool<{ sql: string }>({
  name: 'query',
  namespace: 'sql',
  description: 'Runs a read-only query.',
  parameters: { type: 'object', properties: { sql: { type: 'string' } }, required: ['sql'], additionalProperties: false },
  handle: ({ args }) => ({ rows: [{ sql: args.sql, at: new Date(0) }] }),
});
const exec = defineFreeformTool({ name: 'sql_exec', description: 'Runs a statement.', handle: ({ input }) => `ran ${input}` });

/** What the model was sent back for each tool call, read from the mock's last prompt. */
function toolResultsSent(model: MockLanguageModelV4): unknown[] {
  const prompt = model.doGenerateCalls.at(-1)!.prompt;
  return prompt.flatMap((message) => (message.role === 'tool' ? message.content.map((part) => (part as { output?: unknown }).output) : []));
}

describe('executorsAsAiSdkTools: executors under generateText', () => {
  it('runs a plugin executor through the registry and sends the model the text a Switchyard host sends', async () => {
    const tools = executorsAsAiSdkTools([query, exec]);
    expect(Object.keys(tools)).toEqual(['sql__query', 'sql_exec']);
    const model = new MockLanguageModelV4({
      doGenerate: [toolCalls(['c1', 'sql__query', { sql: 'select 1' }], ['c2', 'sql_exec', { input: 'vacuum' }], ['c3', 'sql__query', { sql: 3 }]), textStep('done')],
    });
    const result = await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(3) });
    expect(result.text).toBe('done');
    const step = result.steps[0];
    // The application reads the typed value (the Date converted as JSON converts it).
    expect(step.toolResults.map((part) => [part.toolCallId, part.output])).toEqual([
      ['c1', { rows: [{ sql: 'select 1', at: '1970-01-01T00:00:00.000Z' }] }],
      ['c2', 'ran vacuum'],
    ]);
    const sent = toolResultsSent(model);
    expect(sent[0]).toEqual({ type: 'text', value: '{"rows":[{"sql":"select 1","at":"1970-01-01T00:00:00.000Z"}]}' });
    expect(sent[1]).toEqual({ type: 'text', value: 'ran vacuum' });
    // Invalid arguments: refused by the registry's validation with its model-visible text, as a tool error.
    expect(sent[2]).toEqual({ type: 'error-text', value: 'Error: invalid arguments for sql__query: arguments.sql must be string' });
  });

  it('a failure reaches the model as a tool error with the model-visible text; hooks run around the call', async () => {
    const seen: string[] = [];
    const hooks = createHookEngine({
      functionHooks: [{ event: 'PreToolUse', run: (input) => (seen.push(String(input.tool_name)), { decision: 'block', reason: 'read-only today' }) }],
    });
    try {
      const model = new MockLanguageModelV4({ doGenerate: [toolCalls(['c1', 'sql_exec', { input: 'drop table t' }]), textStep('ok')] });
      const result = await generateText({ model, tools: executorsAsAiSdkTools([exec], { hooks }), prompt: 'go', stopWhen: stepCountIs(2) });
      expect(seen).toEqual(['sql_exec']);
      expect(result.steps[0].toolResults).toEqual([]);
      const sent = toolResultsSent(model);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toEqual({ type: 'error-text', value: 'Error: Tool call blocked by PreToolUse hook: read-only today. Tool: sql_exec' });
    } finally {
      await hooks.close();
    }
  });

  it('refuses an executor of another protocol line with both versions named', () => {
    expect(() => executorsAsAiSdkTools([{ ...query, protocolVersion: '9.0.0' }])).toThrow('was built against @switchyard/protocol 9.0.0');
  });
});
