import { describe, expect, it } from 'vitest';
import { TYPE_ALLOW_LIST, typecheckRequestBodies, withoutAllowedExtras } from './request-body-types';

describe('the request-body type check itself', () => {
  it('passes a valid body and names the body and field of an invalid one', () => {
    const valid = { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true };
    expect(typecheckRequestBodies([{ kind: 'chat', label: 'valid', body: valid }])).toEqual([]);
    const problems = typecheckRequestBodies([
      { kind: 'chat', label: 'valid', body: valid },
      { kind: 'chat', label: 'unknown field', body: { ...valid, bogus_field: 1 } },
      { kind: 'responses', label: 'custom call with status', body: { model: 'm', stream: true, input: [{ type: 'custom_tool_call', call_id: 'c', name: 'exec', input: 'x', status: 'completed' }] } },
      { kind: 'responses', label: 'not streaming', body: { model: 'm', stream: false, input: 'hi' } },
    ]);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^\[unknown field\] line \d+: .*'"bogus_field"' does not exist in type 'ChatCompletionCreateParamsStreaming'/s);
    expect(problems[1]).toMatch(/^\[custom call with status\] line \d+: .*'"status"' does not exist in type 'ResponseCustomToolCall'/s);
    expect(problems[2]).toMatch(/^\[not streaming\] line \d+: Type 'false' is not assignable to type 'true'/);
  }, 120_000);

  it('removes only the allow-listed fields, each documented', () => {
    expect(TYPE_ALLOW_LIST.every((entry) => entry.why.length > 20)).toBe(true);
    const body = {
      model: 'm',
      stream: true,
      messages: [{ role: 'assistant', content: null, reasoning_content: 'r', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' }, extra_content: { google: {} } }] }],
    };
    expect(withoutAllowedExtras('chat', body)).toEqual({
      model: 'm',
      stream: true,
      messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }],
    });
    expect(typecheckRequestBodies([{ kind: 'chat', label: 'allowed', body }])).toEqual([]);
    expect(withoutAllowedExtras('responses', body)).toEqual(body);
  });
});
