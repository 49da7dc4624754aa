import { describe, expect, it } from 'vitest';
import { MAX_WIRE_NAME_LENGTH, type WireTool } from '@switchyard/protocol';
import { nameHash } from '@switchyard/kit/internal';
import { defaultChatName, toChatTools } from './chat-conversion';

const wireFn = (name: string): WireTool => ({ type: 'function', name, description: `The ${name} tool.`, parameters: { type: 'object', properties: {} } });
const wireNamespace = (name: string, members: readonly string[]): WireTool => ({
  type: 'namespace',
  name,
  description: `Tools of ${name}.`,
  tools: members.map((member) => ({ type: 'function', name: member, description: `The ${member} tool.`, parameters: { type: 'object', properties: {} } })),
});
const sentNames = (tools: readonly WireTool[]) => toChatTools(tools).tools.map((tool) => tool.function.name);

describe('Chat Completions function names', () => {
  const server = `mcp__knowledge_graph_memory_for_the_customer_support_team_of_acme_corp__`;

  it('leave a name of up to 64 characters as it is and shorten a longer one, keeping the tool name at the end', () => {
    const fits = 'a'.repeat(MAX_WIRE_NAME_LENGTH);
    const over = 'b'.repeat(MAX_WIRE_NAME_LENGTH + 1);
    expect(sentNames([wireFn(fits), wireFn(over)])).toEqual([fits, `${over.slice(0, 53)}_${nameHash(over)}`]);

    const { tools, targets } = toChatTools([wireNamespace(server, ['create_entities', 'read_graph'])]);
    const names = tools.map((tool) => tool.function.name);
    // the start, `_`, ten hex digits of the full name's hash, `_`, the tool's own name: 64 in all
    const shortened = (tool: string) => `${`${server}${tool}`.slice(0, 64 - 10 - 1 - tool.length - 1)}_${nameHash(`${server}${tool}`)}_${tool}`;
    expect(names).toEqual([shortened('create_entities'), shortened('read_graph')]);
    expect(names[0]).toBe(`mcp__knowledge_graph_memory_for_the_c_${nameHash(`${server}create_entities`)}_create_entities`);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_]{1,64}$/);
    // the mapping kept for dispatch: each sent name goes back to its namespace and tool
    expect(targets.get(names[0])).toEqual({ kind: 'function', name: 'create_entities', namespace: server });
    expect(targets.get(names[1])).toEqual({ kind: 'function', name: 'read_graph', namespace: server });
  });

  it('are stable: fresh tool lists give the same names, and a tool no longer listed keeps its name in the history', () => {
    const tools = () => [wireNamespace(server, ['create_entities']), wireFn('clock')];
    expect(sentNames(tools())).toEqual(sentNames(tools()));
    const { chatName } = toChatTools([wireFn('clock')]);
    expect(chatName('create_entities', server)).toBe(sentNames(tools())[0]);
    expect(chatName('create_entities', server)).toBe(defaultChatName('create_entities', server));
  });

  it('are collision-free: a shortened name that meets another tool is hashed again, and both dispatch to their own tool', () => {
    const long = `${'x'.repeat(70)}_tool`;
    const taken = defaultChatName(long);
    // a tool whose own (short) name is exactly what the long one shortens to comes first
    const { tools, targets } = toChatTools([wireFn(taken), wireFn(long)]);
    const names = tools.map((tool) => tool.function.name);
    expect(names[0]).toBe(taken);
    expect(names[1]).not.toBe(taken);
    expect(names[1]).toBe(defaultChatName(long, undefined, `${long}#2`));
    expect(names[1]).toHaveLength(64);
    expect(targets.get(names[0])).toEqual({ kind: 'function', name: taken });
    expect(targets.get(names[1])).toEqual({ kind: 'function', name: long });
    // and the history names the long tool by the name it was sent under
    expect(toChatTools([wireFn(taken), wireFn(long)]).chatName(long)).toBe(names[1]);
  });

  it('of long names sharing their first 53 characters still differ', () => {
    const start = 'y'.repeat(60);
    const names = sentNames([wireFn(`${start}_alpha`), wireFn(`${start}_beta`), wireFn(`${start}_gamma`)]);
    expect(new Set(names).size).toBe(3);
    for (const name of names) expect(name.length).toBeLessThanOrEqual(64);
  });
});
