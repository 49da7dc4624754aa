import { fileURLToPath } from 'node:url';
import { codeModeName } from '@switchyard/protocol';
import { codeModeDeclaration } from '@switchyard/kit/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, executor } from '../test/helpers';
import { mcpTools, type McpTools } from './mcp-tools';

const REF_SERVER = fileURLToPath(new URL('../test/fixtures/ref-server.mjs', import.meta.url));

describe('Code Mode declarations of MCP tools whose output schemas use $ref', () => {
  let mcp: McpTools;

  beforeAll(async () => {
    mcp = await mcpTools({ servers: { sample: { command: process.execPath, args: [REF_SERVER] } } });
  });
  afterAll(() => mcp.close());

  function declarationOf(flatName: string): string {
    const tool = executor(mcp, flatName);
    if (tool.spec.type !== 'function') throw new Error('not a function tool');
    return codeModeDeclaration({ codeModeName: codeModeName(tool.name), kind: 'function', description: tool.spec.description, inputSchema: tool.spec.parameters, outputSchema: tool.spec.outputSchema });
  }

  it('resolves the structured content refs against the server output schema, not the CallToolResult envelope', () => {
    expect(declarationOf('mcp__sample__search')).toBe(
      'declare const tools: { mcp__sample__search(args: {}): Promise<CallToolResult<{ results: Array<{ id: string; score: number; }>; }>>; };',
    );
  });

  it('renders a recursive $defs ref once, as a named type declared before the tool', () => {
    expect(declarationOf('mcp__sample__tree')).toBe(
      'type node = { children?: Array<node>; label: string; };\ndeclare const tools: { mcp__sample__tree(args: { [key: string]: unknown; }): Promise<CallToolResult<{ root: node; }>>; };',
    );
  });

  it('still validates the structured content against the schema with its refs', async () => {
    const { output } = await call(executor(mcp, 'mcp__sample__search'));
    expect(output.success).not.toBe(false);
    expect(output.codeModeResult({ kind: 'function', arguments: '{}' })).toMatchObject({ structuredContent: { results: [{ id: 'a', score: 0.9 }] } });
  });
});
