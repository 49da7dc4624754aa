import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createHookEngine } from '@switchyard/hooks';
import type { ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession, type Session } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { clockTool } from '@switchyard/tool-clock';
import { exec, say, texts, useSessions } from './helpers';

// A host's first day: one namespaced tool, a hooks.json written for the name the host sees.
const dir = mkdtempSync(join(tmpdir(), 'switchyard-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let ran = 0;
const checkStock = defineFunctionTool({
  name: 'check_stock',
  namespace: 'inventory',
  description: 'Stock count of a SKU.',
  parameters: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
  handle: ({ args }) => {
    ran++;
    return { sku: args.sku, count: 3 };
  },
});

/** A hooks.json whose one PreToolUse command hook blocks whatever `matcher` selects (exit 2, reason on stderr). */
function hooksFile(matcher: string): string {
  const path = join(dir, `hooks-${matcher.replace(/\W/g, '_')}.json`);
  const hook = { type: 'command', command: 'cat >/dev/null; echo "stock is secret" >&2; exit 2', timeout: 10 };
  writeFileSync(path, JSON.stringify({ hooks: { PreToolUse: [{ matcher, hooks: [hook] }] } }));
  return path;
}

const session = useSessions();

const directCall: ResponseItem = { type: 'function_call', call_id: 'c1', name: 'check_stock', namespace: 'inventory', arguments: '{"sku":"lamp"}' };

describe('one display name per tool', () => {
  for (const matcher of ['inventory__check_stock', 'check_stock', 'inventory.check_stock']) {
    it(`a hooks.json matcher "${matcher}" blocks the namespaced tool called directly`, async () => {
      ran = 0;
      const hooks = createHookEngine({ shell: '/bin/sh', configFiles: [hooksFile(matcher)] });
      const s = session({ tools: [checkStock], hooks });
      const names: string[] = [];
      s.on('tool-call-blocked', (event) => names.push(event.toolName));
      const model = createScriptedModel([[directCall], [say('ok')]]);
      const result = await s.runTurn({ model, input: 'how many lamps?' });
      expect(result.items.find((item) => item.type === 'function_call_output')).toEqual({
        type: 'function_call_output',
        call_id: 'c1',
        output: 'Tool call blocked by PreToolUse hook: stock is secret. Tool: inventory__check_stock',
      });
      expect(ran).toBe(0);
      expect(names).toEqual(['inventory__check_stock']);
      // the wire keeps the Responses-API namespace form
      expect(model.requests[0].tools).toContainEqual(expect.objectContaining({ type: 'namespace', name: 'inventory' }));
      await hooks.close();
    });
  }

  it('the same hooks.json blocks the tool called from a Code Mode cell', async () => {
    ran = 0;
    const hooks = createHookEngine({ shell: '/bin/sh', configFiles: [hooksFile('inventory__check_stock')] });
    const s = session({ toolMode: 'code-mode-only', tools: [checkStock], hooks });
    const seen: string[] = [];
    s.on('tool-call-blocked', (event) => seen.push(`${event.source.kind}:${event.toolName}`));
    const code = `try { await tools.inventory__check_stock({ sku: 'lamp' }); text('ran'); } catch (e) { text('caught: ' + e); }`;
    const model = createScriptedModel([[exec('e1', code)], [say('ok')]]);
    const result = await s.runTurn({ model, input: 'how many lamps?' });
    const output = result.items.find((item) => item.type === 'custom_tool_call_output');
    expect(texts(output).slice(1)).toEqual(['caught: Tool call blocked by PreToolUse hook: stock is secret. Tool: inventory__check_stock']);
    expect(ran).toBe(0);
    expect(seen).toEqual(['code-mode:inventory__check_stock']);
    await hooks.close();
  });

  it('errors the model reads, events and the plan table use the same name', async () => {
    const s = session({ tools: [checkStock, clockTool()] });
    const turn = s.beginTurn();
    const step = await turn.step();
    expect(step.plan.describe().map((row) => row.name)).toEqual(['inventory__check_stock', 'clock__curr_time']);
    const ends: string[] = [];
    s.on('tool-call-end', (event) => ends.push(event.toolName));
    await step.dispatch(directCall);
    const missing = await step.dispatch({ type: 'function_call', call_id: 'c2', name: 'count', namespace: 'inventory', arguments: '{}' });
    expect(missing).toEqual({ type: 'function_call_output', call_id: 'c2', output: 'unsupported call: inventory__count' });
    const invalid = await step.dispatch({ type: 'function_call', call_id: 'c3', name: 'check_stock', namespace: 'inventory', arguments: '{}' });
    expect((invalid as { output: string }).output).toBe('invalid arguments for inventory__check_stock: arguments.sku is required');
    expect(ends).toEqual(['inventory__check_stock']);
    await turn.end();
  });
});
