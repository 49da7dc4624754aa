import { describe, expect, it } from 'vitest';
import { fn, freeform } from '../test/fixtures';
import { buildCodeModeSurface } from './code-mode-surface';

describe('code-mode names', () => {
  it.each([
    [undefined, 'read_file', 'read_file'],
    ['clock', 'curr_time', 'clock__curr_time'],
    ['mcp__docs__', 'search', 'mcp__docs__search'],
    ['ns', '_private', 'ns_private'],
    ['functions.', 'echo', 'functions___echo'],
    ['mcp__my-server__', 'get-profile', 'mcp__my_server__get_profile'],
    [undefined, 'hidden-dynamic-tool', 'hidden_dynamic_tool'],
    [undefined, 'has space$', 'has_space$'],
  ])('namespace %s + %s → tools.%s', (namespace, name, expected) => {
    const { surface } = buildCodeModeSurface('code-mode', [fn(name, { namespace })]);
    expect(surface.tools.map((tool) => tool.codeModeName)).toEqual([expected]);
    expect(surface.tools[0].toolName).toEqual(namespace ? { name, namespace } : { name });
  });
});

describe('buildCodeModeSurface', () => {
  it('includes direct and deferred tools, skips model-only, hidden, excluded namespaces, exec and wait', () => {
    const { surface, callable } = buildCodeModeSurface(
      'code-mode-only',
      [
        fn('zeta'),
        fn('later', { exposure: 'deferred' }),
        fn('model_only', { exposure: 'direct-model-only' }),
        fn('secret', { exposure: 'hidden' }),
        fn('navigate', { namespace: 'browser' }),
        freeform('apply_patch'),
        fn('exec'),
        fn('wait'),
      ],
      ['browser'],
    );
    expect(surface.mode).toBe('code-mode-only');
    expect(surface.tools.map((tool) => [tool.codeModeName, tool.kind, tool.deferred])).toEqual([
      ['apply_patch', 'freeform', false],
      ['later', 'function', true],
      ['zeta', 'function', false],
    ]);
    expect(surface.hasDeferredTools).toBe(true);
    expect(callable.size).toBe(3);
  });

  it('marks an idempotent executor\'s definition idempotent (a resumed cell may run its call again)', () => {
    const { surface } = buildCodeModeSurface('code-mode', [{ ...fn('get'), idempotent: true }, fn('put')]);
    expect(surface.tools.map((tool) => [tool.codeModeName, tool.idempotent])).toEqual([
      ['get', true],
      ['put', undefined],
    ]);
  });

  it('carries schemas, descriptions and the first non-blank namespace description', () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } } };
    const outputSchema = { type: 'object', properties: { tempC: { type: 'number' } } };
    const { surface } = buildCodeModeSurface('code-mode', [
      fn('alerts', { namespace: 'weather', namespaceDescription: ' ' }),
      fn('get_weather', { namespace: 'weather', namespaceDescription: 'Weather data.', description: 'Now.', parameters, outputSchema }),
      fn('plain'),
    ]);
    expect(surface.tools).toEqual([
      { toolName: { name: 'plain' }, codeModeName: 'plain', description: 'The plain tool.', kind: 'function', inputSchema: { type: 'object', properties: {} }, deferred: false },
      {
        toolName: { name: 'alerts', namespace: 'weather' },
        codeModeName: 'weather__alerts',
        description: 'The alerts tool.',
        kind: 'function',
        inputSchema: { type: 'object', properties: {} },
        deferred: false,
        namespaceDescription: 'Weather data.',
      },
      {
        toolName: { name: 'get_weather', namespace: 'weather' },
        codeModeName: 'weather__get_weather',
        description: 'Now.',
        kind: 'function',
        inputSchema: parameters,
        outputSchema,
        deferred: false,
        namespaceDescription: 'Weather data.',
      },
    ]);
    expect(surface.hasDeferredTools).toBe(false);
  });

  it('keeps the first of two tools that normalize to the same identifier and warns about the other', () => {
    const first = fn('get-profile');
    const second = fn('get.profile');
    const { surface, callable, warnings } = buildCodeModeSurface('code-mode', [first, second]);
    expect(surface.tools.map((tool) => tool.toolName.name)).toEqual(['get-profile']);
    expect(callable.has(first)).toBe(true);
    expect(callable.has(second)).toBe(false);
    expect(warnings).toEqual([
      {
        type: 'plan-warning',
        toolName: 'get.profile',
        message: 'tool "get.profile" is not callable from code mode: its code-mode name "get_profile" is already taken by "get-profile"',
      },
    ]);
  });
});
