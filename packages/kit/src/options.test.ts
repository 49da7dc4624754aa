import { describe, expect, it } from 'vitest';
import { isSwitchyardError } from '@switchyard/protocol';
import { checkOptions, closestName, optionRules as rule, type OptionsShape } from './options';

interface Example {
  baseURL?: string;
  toolMode?: 'direct' | 'code-mode' | 'code-mode-only';
  tools: readonly unknown[] | (() => readonly unknown[]);
  provider?: { namespaceTools?: boolean; toolSearch?: boolean };
  limit?: number;
  names?: string[];
}

const shape: OptionsShape<Example> = {
  baseURL: rule.string(),
  toolMode: rule.oneOf('direct', 'code-mode', 'code-mode-only'),
  tools: rule.required(rule.anyOf(rule.listOf(rule.any()), rule.function())),
  provider: rule.shape<NonNullable<Example['provider']>>({ namespaceTools: rule.boolean(), toolSearch: rule.boolean() }),
  limit: rule.number({ min: 1, integer: true }),
  names: rule.listOf(rule.string()),
};

function problem(options: unknown): string {
  try {
    checkOptions('example', options, shape);
  } catch (error) {
    expect(isSwitchyardError(error) && error.code).toBe('CONFIG');
    return (error as Error).message;
  }
  return 'accepted';
}

describe('checkOptions', () => {
  it('accepts valid options and treats undefined as absent', () => {
    expect(problem({ tools: [], baseURL: 'http://x', toolMode: 'direct', provider: { toolSearch: true }, limit: 3, names: ['a'] })).toBe('accepted');
    expect(problem({ tools: () => [], baseURL: undefined })).toBe('accepted');
  });

  it('names an unknown option and the closest valid one', () => {
    expect(problem({ tools: [], baseUrl: 'http://x' })).toBe('example: unknown option `baseUrl`; did you mean `baseURL`?');
    expect(problem({ tools: [], toolmode: 'direct' })).toBe('example: unknown option `toolmode`; did you mean `toolMode`?');
    expect(problem({ tool: [] })).toBe('example: unknown option `tool`; did you mean `tools`?');
    expect(problem({ tools: [], provider: { namespaceTool: false } })).toBe('example: unknown option `provider.namespaceTool`; did you mean `provider.namespaceTools`?');
    expect(problem({ tools: [], zzzzzz: 1 })).toBe('example: unknown option `zzzzzz`; the options are `baseURL`, `toolMode`, `tools`, `provider`, `limit`, `names`');
  });

  it('names an invalid value, what it must be, and a near miss', () => {
    expect(problem({ tools: [], toolMode: 'codemode' })).toBe(
      'example: option `toolMode` must be one of "direct", "code-mode", "code-mode-only"; got "codemode" (did you mean "code-mode"?)',
    );
    expect(problem({ tools: [], baseURL: 42 })).toBe('example: option `baseURL` must be a string; got 42');
    expect(problem({ tools: [], limit: 0 })).toBe('example: option `limit` must be an integer ≥ 1; got 0');
    expect(problem({ tools: [], limit: Number.NaN })).toBe('example: option `limit` must be an integer ≥ 1; got NaN');
    expect(problem({ tools: [], names: ['a', 3] })).toBe('example: option `names[1]` must be a string; got 3');
    expect(problem({ tools: 'clock' })).toBe('example: option `tools` must be a list or a function; got "clock"');
    expect(problem({ tools: [], provider: true })).toBe('example: option `provider` must be an object; got true');
    expect(problem({})).toBe('example: option `tools` is required');
    expect(problem(null)).toBe('example: options must be an object; got null');
    expect(problem([1])).toBe('example: options must be an object; got an array');
  });

  it('suggests only close names', () => {
    expect(closestName('files', ['configFiles', 'config', 'functionHooks'])).toBe('configFiles');
    expect(closestName('shel', ['shell', 'env'])).toBe('shell');
    expect(closestName('APIKEY', ['apiKey', 'model'])).toBe('apiKey');
    expect(closestName('completely', ['model', 'apiKey'])).toBeUndefined();
  });
});
