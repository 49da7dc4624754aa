import { describe, expect, it } from 'vitest';
import { specName, toWireTool, toWireTools, type ToolSpec } from './tool-spec';
import { displayName, toolName, toolNameEquals, toolNameKey, toolNameSpellings, compareToolNames } from './tool-name';
import { codeModeName } from './code-mode';

const params = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

describe('toWireTool', () => {
  it('serializes a function spec without output_schema and without defer_loading when unset', () => {
    const spec: ToolSpec = { type: 'function', name: 'get_weather', description: 'Weather.', parameters: params, outputSchema: { type: 'object' } };
    expect(JSON.stringify(toWireTool(spec))).toBe(
      '{"type":"function","name":"get_weather","description":"Weather.","strict":false,"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}',
    );
  });

  it('serializes defer_loading before parameters when set, and strict when given', () => {
    const spec: ToolSpec = { type: 'function', name: 'x', description: 'd', strict: true, deferLoading: true, parameters: { type: 'object', properties: {} } };
    expect(JSON.stringify(toWireTool(spec))).toBe(
      '{"type":"function","name":"x","description":"d","strict":true,"defer_loading":true,"parameters":{"type":"object","properties":{}}}',
    );
  });

  it('serializes a custom spec with a lark grammar, and with a text format when no grammar', () => {
    expect(toWireTool({ type: 'custom', name: 'exec', description: 'Run JS.', grammar: { syntax: 'lark', definition: 'start: /.+/' } })).toEqual({
      type: 'custom',
      name: 'exec',
      description: 'Run JS.',
      format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' },
    });
    expect(JSON.stringify(toWireTool({ type: 'custom', name: 'note', description: 'Free text.' }))).toBe(
      '{"type":"custom","name":"note","description":"Free text.","format":{"type":"text"}}',
    );
  });

  it('serializes a namespace with function members (output_schema stripped from members)', () => {
    const spec: ToolSpec = {
      type: 'namespace',
      name: 'clock',
      description: 'Tools for reading the current time.',
      tools: [{ type: 'function', name: 'curr_time', description: 'Return the current time in UTC.', parameters: { type: 'object', properties: {} }, outputSchema: { type: 'string' } }],
    };
    expect(JSON.stringify(toWireTool(spec))).toBe(
      '{"type":"namespace","name":"clock","description":"Tools for reading the current time.","tools":[{"type":"function","name":"curr_time","description":"Return the current time in UTC.","strict":false,"parameters":{"type":"object","properties":{}}}]}',
    );
  });

  it('serializes tool_search and passes hosted specs through verbatim', () => {
    const search: ToolSpec = { type: 'tool_search', execution: 'client', description: '# Tool discovery', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false } };
    expect(JSON.stringify(toWireTool(search))).toBe(
      '{"type":"tool_search","execution":"client","description":"# Tool discovery","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}}',
    );
    const hosted: ToolSpec = { type: 'hosted', json: { type: 'web_search', external_web_access: false } };
    expect(JSON.stringify(toWireTools([hosted]))).toBe('[{"type":"web_search","external_web_access":false}]');
    expect(specName(hosted)).toBe('web_search');
    expect(specName(search)).toBe('tool_search');
  });
});

describe('ToolName', () => {
  it('displays the Code Mode join (namespace + "__" + name unless the namespace ends in "_"), bare for the default namespace', () => {
    expect(displayName(toolName('search', 'mcp__docs__'))).toBe('mcp__docs__search');
    expect(displayName(toolName('curr_time', 'clock'))).toBe('clock__curr_time');
    expect(displayName(toolName('check_stock', 'inventory'))).toBe('inventory__check_stock');
    expect(displayName(toolName('_private', 'team'))).toBe('team_private');
    // unlike the code-mode identifier, the display name keeps the tool's own characters
    expect(displayName(toolName('read-file', 'fs'))).toBe('fs__read-file');
    expect(codeModeName(toolName('read-file', 'fs'))).toBe('fs__read_file');
    expect(codeModeName(toolName('curr_time', 'clock'))).toBe(displayName(toolName('curr_time', 'clock')));
    expect(displayName(toolName('echo', 'functions'))).toBe('echo');
    expect(displayName(toolName('exec'))).toBe('exec');
    expect(displayName(toolName('exec', ''))).toBe('exec');
  });

  it('compares on both fields and keys without collisions', () => {
    expect(toolNameEquals(toolName('a', 'x'), toolName('a', 'x'))).toBe(true);
    expect(toolNameEquals(toolName('a'), toolName('a', 'x'))).toBe(false);
    expect(toolNameEquals(toolName('a', ''), toolName('a'))).toBe(true);
    expect(toolNameKey(toolName('b', 'a__'))).not.toBe(toolNameKey(toolName('__b', 'a')));
    expect(displayName(toolName('b', 'a__'))).toBe(displayName(toolName('__b', 'a')));
    expect(displayName(toolName('b', 'a'))).toBe('a__b');
    const sorted = [toolName('z'), toolName('b', 'a'), toolName('a', 'a'), toolName('m')].sort(compareToolNames);
    expect(sorted.map(displayName)).toEqual(['a__a', 'a__b', 'm', 'z']);
  });

  it('spells a tool every way a hook matcher may name it', () => {
    expect(toolNameSpellings(toolName('check_stock', 'inventory'))).toEqual(['inventory__check_stock', 'check_stock', 'inventory.check_stock']);
    expect(toolNameSpellings(toolName('read_file', 'mcp__fs__'))).toEqual(['mcp__fs__read_file', 'read_file', 'mcp__fs__.read_file', 'mcp__fs.read_file']);
    expect(toolNameSpellings(toolName('exec'))).toEqual(['exec']);
  });
});
