import { createHookEngine } from '@switchyard/hooks';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession } from '@switchyard/session';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { codeModeTool } from './index';
import { textStep, toolCalls } from '../test/mock-steps';


const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function guardedSession() {
  const ran: string[] = [];
  const listFiles = defineFunctionTool({
    name: 'list_files',
    description: 'Lists the workspace.',
    parameters: { type: 'object', properties: {} },
    handle: () => {
      ran.push('list_files');
      return ['README.md', '.env'];
    },
  });
  const readSecret = defineFunctionTool<{ name: string }>({
    name: 'read_secret',
    description: 'Reads a secret.',
    parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    handle: () => {
      ran.push('read_secret');
      return 'hunter2';
    },
  });
  const seen: string[] = [];
  const hooks = createHookEngine({
    functionHooks: [
      {
        event: 'PreToolUse',
        run: (input) => {
          seen.push(`${String(input.tool_name)}:${(input.caller as { kind: string }).kind}`);
          return input.tool_name === 'read_secret' ? { decision: 'block', reason: 'secrets stay on the host' } : undefined;
        },
      },
    ],
  });
  const session = createSession({ toolMode: 'code-mode-only', tools: [listFiles, readSecret], hooks });
  cleanups.push(() => hooks.close(), () => session.shutdown());
  return { session, ran, seen };
}

describe('codeModeTool: Code Mode as AI SDK tools under generateText', () => {
  it("exposes exec ({ code }) and wait with the plan's descriptions", async () => {
    const { session } = guardedSession();
    const tools = await codeModeTool({ session });
    expect(Object.keys(tools)).toEqual(['exec', 'wait']);
    expect(tools.exec.description).toContain('list_files');
    const model = new MockLanguageModelV4({ doGenerate: [textStep('nothing to do')] });
    await generateText({ model, tools, prompt: 'hi' });
    const offered = model.doGenerateCalls[0]!.tools!;
    expect(offered.map((tool) => tool.name)).toEqual(['exec', 'wait']);
    expect((offered[0] as { inputSchema: { required: string[] } }).inputSchema.required).toEqual(['code']);
    expect((offered[1] as { inputSchema: { properties: Record<string, unknown> } }).inputSchema.properties).toHaveProperty('cell_id');
  });

  it('runs exec through the session router; a nested call blocked by a hook is reported to the model', async () => {
    const { session, ran, seen } = guardedSession();
    const code = "const files = await tools.list_files({});\ntext('files: ' + files.join(', '));\nconst secret = await tools.read_secret({ name: 'db' });\ntext('secret: ' + secret);";
    const model = new MockLanguageModelV4({ doGenerate: [toolCalls(['call-exec-1', 'exec', { code }]), textStep('The secret is not readable from here.')] });

    const result = await generateText({ model, tools: await codeModeTool({ session }), prompt: 'Read the db secret.', stopWhen: stepCountIs(4) });

    expect(ran).toEqual(['list_files']);
    expect(seen).toEqual(['exec:direct', 'list_files:code-mode', 'read_secret:code-mode']);
    // What the model read in its second request: the exec result with the block message.
    const toolMessage = model.doGenerateCalls[1]!.prompt.find((message) => message.role === 'tool')!;
    const part = toolMessage.content[0] as { type: string; toolCallId: string; toolName: string; output: { type: string; value: string } };
    expect(part).toMatchObject({ type: 'tool-result', toolCallId: 'call-exec-1', toolName: 'exec' });
    expect(part.output.type).toBe('text');
    expect(part.output.value).toMatch(/^Script failed\nWall time \d+\.\d seconds\nOutput:\n/);
    expect(part.output.value).toContain('files: README.md, .env');
    expect(part.output.value).toContain('Tool call blocked by PreToolUse hook: secrets stay on the host. Tool: read_secret');
    expect(part.output.value).not.toContain('hunter2');
    expect(result.text).toBe('The secret is not readable from here.');
  });

  it('a yielded cell is observed with wait in a later call', async () => {
    const { session } = guardedSession();
    const code = "// @exec: {\"yield_time_ms\": 100}\nyield_control();\nconst files = await tools.list_files({});\ntext('later: ' + files.length);";
    let cellId = '';
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        const calls = model.doGenerateCalls.length;
        if (calls === 1) return toolCalls(['call-exec', 'exec', { code }]);
        if (calls === 2) {
          const tool = options.prompt.find((message) => message.role === 'tool')!.content[0] as { output: { value: string } };
          cellId = /Script running with cell ID (\S+)/.exec(tool.output.value)?.[1] ?? '';
          return toolCalls(['call-wait', 'wait', { cell_id: cellId, yield_time_ms: 5_000 }]);
        }
        return textStep('done');
      },
    });
    const result = await generateText({ model, tools: await codeModeTool({ session }), prompt: 'go', stopWhen: stepCountIs(5) });
    expect(cellId).not.toBe('');
    const waited = result.steps[1]!.toolResults[0]!;
    expect(waited.toolName).toBe('wait');
    const texts = (waited.output as Array<{ type: string; text: string }>).map((item) => item.text);
    expect(texts[0]).toMatch(/^Script completed\nWall time \d+\.\d seconds\nOutput:\n$/);
    expect(texts.slice(1)).toEqual(['later: 2']);
  });

  it('refuses a session that plans no Code Mode (CONFIG)', async () => {
    const session = createSession({ tools: [] });
    cleanups.push(() => session.shutdown());
    await expect(codeModeTool({ session })).rejects.toMatchObject({ code: 'CONFIG', message: expect.stringContaining("toolMode 'code-mode'") });
  });
});
