// Tool schemas of a real SDK server written by zod 4 (JSON Schema 2020-12) through the registry's
// real dispatch: tuples, dependentRequired, an older draft-07 tuple, and the error text of the
// SDK's McpError.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, executor, functionOutputText } from '../test/helpers';
import { mcpTools, type McpTools } from './mcp-tools';
import { DEFAULT_MCP_DIALECT, ToolSchemaValidators } from './schema-dialect';

/** How a JSON value appears inside the text of a tool output (itself JSON). */
const quoted = (value: unknown) => JSON.stringify(JSON.stringify(value)).slice(1, -1);
const DIALECT_SERVER = fileURLToPath(new URL('../test/fixtures/dialect-server.mjs', import.meta.url));

describe('MCP tool schemas as JSON Schema 2020-12', () => {
  let mcp: McpTools;
  beforeAll(async () => {
    mcp = await mcpTools({ servers: { d: { command: process.execPath, args: [DIALECT_SERVER] } } });
  });
  afterAll(() => mcp.close());

  const refusal = async (name: string, args: object) => {
    const error = await call(executor(mcp, name), args as never).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    return error?.message;
  };

  it('a zod 4 tuple (prefixItems + items: false) accepts {"point":[1,2]} with or without $schema, and refuses a third item', async () => {
    for (const name of ['mcp__d__plot', 'mcp__d__plot_bare']) {
      expect(functionOutputText((await call(executor(mcp, name), { point: [1, 2] })).item)).toContain(quoted({ point: [1, 2] }));
      expect(await refusal(name, { point: [1, 2, 3] })).toMatch(/arguments\.point must NOT have more than 2 items/);
      expect(await refusal(name, { point: [1, 'x'] })).toMatch(/arguments\.point\[1\] must be number/);
    }
  });

  it('keeps $schema for the model and the registry; a schema without one carries the 2020-12 dialect', () => {
    expect(executor(mcp, 'mcp__d__plot').spec).toMatchObject({ parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema' } });
    expect(executor(mcp, 'mcp__d__plot_bare').spec).toMatchObject({ parameters: { $schema: DEFAULT_MCP_DIALECT } });
  });

  it('enforces dependentRequired', async () => {
    expect(await refusal('mcp__d__shipping', { name: 'a', credit_card: '4111' })).toMatch(/billing_address/);
    expect(functionOutputText((await call(executor(mcp, 'mcp__d__shipping'), { name: 'a', credit_card: '4111', billing_address: 'x' })).item)).toContain('billing_address');
  });

  it('an older server draft-07 tuple without $schema still works (validated as draft-07)', async () => {
    expect(executor(mcp, 'mcp__d__old_tuple').spec).not.toHaveProperty('parameters.$schema');
    expect(functionOutputText((await call(executor(mcp, 'mcp__d__old_tuple'), { pair: [1, 'a'] })).item)).toContain(quoted({ pair: [1, 'a'] }));
    expect(await refusal('mcp__d__old_tuple', { pair: ['a', 'a'] })).toMatch(/arguments\.pair\[0\] must be number/);
  });

  it('the SDK McpError text is not doubled', async () => {
    const text = functionOutputText((await call(executor(mcp, 'mcp__d__strict_point'), { x: 1 }).catch((error: Error) => ({ item: { type: 'function_call_output', call_id: 'c', output: error.message } as never }))).item);
    expect(text).toContain('MCP error -32602: x must be even');
    expect(text).not.toContain('MCP error -32602: MCP error');
  });

  it('a schema that compiles in no dialect is refused', () => {
    expect(() => new ToolSchemaValidators().compile({ type: 'object', properties: { a: { type: 'no-such-type' } } })).toThrow();
  });
});
