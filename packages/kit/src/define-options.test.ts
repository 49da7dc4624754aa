import { describe, expect, it } from 'vitest';
import { defineFreeformTool, defineFunctionTool } from './define';
import { configError } from '@switchyard/config/config-error';

describe('defineFunctionTool and defineFreeformTool check their options', () => {
  it('a `handler` typo is a CONFIG error pointing at `handle`, at definition, not when the model calls', async () => {
    expect(await configError(() => defineFunctionTool({ name: 'echo', description: '', parameters: { type: 'object' }, handler: () => 'x' } as never))).toBe(
      'defineFunctionTool(echo): unknown option `handler`; did you mean `handle`?',
    );
    expect(await configError(() => defineFreeformTool({ name: 'sql', description: '', handler: () => 'x' } as never))).toBe(
      'defineFreeformTool(sql): unknown option `handler`; did you mean `handle`?',
    );
  });

  it('names a missing or mistyped required option', async () => {
    expect(await configError(() => defineFunctionTool({ name: 'echo', description: '', parameters: { type: 'object' } } as never))).toBe('defineFunctionTool(echo): option `handle` is required');
    expect(await configError(() => defineFunctionTool({ name: 'echo', description: '', handle: () => 'x' } as never))).toBe('defineFunctionTool(echo): option `parameters` is required');
    expect(await configError(() => defineFunctionTool({ description: '', parameters: {}, handle: () => 'x' } as never))).toBe('defineFunctionTool: option `name` is required');
    expect(await configError(() => defineFreeformTool({ name: 'sql', description: '', handle: 'run' } as never))).toBe('defineFreeformTool(sql): option `handle` must be a function; got "run"');
    expect(await configError(() => defineFunctionTool({ name: 'e', description: '', parameters: {}, exposure: 'defered', handle: () => 'x' } as never))).toBe(
      'defineFunctionTool(e): option `exposure` must be one of "direct", "direct-model-only", "deferred", "hidden"; got "defered" (did you mean "deferred"?)',
    );
  });

  it('accepts every documented option', () => {
    expect(() =>
      defineFunctionTool({
        name: 'echo', namespace: 'util', namespaceDescription: 'Utilities.', description: 'Echoes.', parameters: { type: 'object' }, jsonSchema: { type: 'object' },
        needsApproval: () => false, outputSchema: { type: 'string' }, strict: false, exposure: 'deferred', supportsParallelToolCalls: true,
        waitsForCancellation: true, idempotent: true, hookPayload: false, searchText: 'repeat', handle: () => 'x',
      }),
    ).not.toThrow();
    // idempotent reaches the executor (and from there a cell's tool descriptor); absent, it is absent
    expect(defineFunctionTool({ name: 'get', description: 'Gets.', parameters: { type: 'object' }, idempotent: true, handle: () => 'x' }).idempotent).toBe(true);
    expect(defineFunctionTool({ name: 'put', description: 'Puts.', parameters: { type: 'object' }, handle: () => 'x' }).idempotent).toBeUndefined();
    expect(() => defineFreeformTool({ name: 'sql', description: 'SQL.', grammar: { syntax: 'regex', definition: '.*' }, exposure: 'direct', hookPayload: {}, needsApproval: true, searchText: 'db', handle: ({ input }) => input })).not.toThrow();
  });
});
