import { describe, expect, it } from 'vitest';
import {
  AbortedToolOutput,
  FailureToolOutput,
  FunctionToolOutput,
  JsonToolOutput,
  PREVIEW_TRUNCATED_SUFFIX,
  ToolSearchOutput,
  abortedMessage,
} from './output';
import type { ToolPayload } from '@switchyard/protocol';

const fn: ToolPayload = { kind: 'function', arguments: '{}' };
const custom: ToolPayload = { kind: 'custom', input: 'x' };
const search: ToolPayload = { kind: 'tool-search', arguments: { query: 'q' } };

describe('tool outputs', () => {
  it('FunctionToolOutput answers function and custom calls with the right item', () => {
    const out = FunctionToolOutput.text('hello');
    expect(out.toResponseItem('c1', fn)).toEqual({ type: 'function_call_output', call_id: 'c1', output: 'hello' });
    expect(out.toResponseItem('c2', custom)).toEqual({ type: 'custom_tool_call_output', call_id: 'c2', output: 'hello' });
    expect(out.codeModeResult(fn)).toBe('hello');
    expect(out.success).toBe(true);
  });

  it('collapses one text item to a string and joins content items for Code Mode', () => {
    expect(new FunctionToolOutput([{ type: 'input_text', text: 'only' }]).toResponseItem('c', fn)).toEqual({ type: 'function_call_output', call_id: 'c', output: 'only' });
    const items = new FunctionToolOutput([
      { type: 'input_text', text: 'a' },
      { type: 'input_text', text: '' },
      { type: 'input_image', image_url: 'data:image/png;base64,AA', detail: 'low' },
    ]);
    expect(items.toResponseItem('c', fn)).toEqual({
      type: 'function_call_output',
      call_id: 'c',
      output: [
        { type: 'input_text', text: 'a' },
        { type: 'input_text', text: '' },
        { type: 'input_image', image_url: 'data:image/png;base64,AA', detail: 'low' },
      ],
    });
    expect(items.codeModeResult(fn)).toBe('a\ndata:image/png;base64,AA');
  });

  it('keeps a typed Code Mode value beside the text', () => {
    const out = new FunctionToolOutput('It is 2026-01-01 00:00:00 UTC.', true, { unix_ms: 1 });
    expect(out.codeModeResult(fn)).toEqual({ unix_ms: 1 });
    expect(out.toResponseItem('c', fn)).toEqual({ type: 'function_call_output', call_id: 'c', output: 'It is 2026-01-01 00:00:00 UTC.' });
  });

  it('JsonToolOutput sends JSON text and gives Code Mode the value', () => {
    const out = new JsonToolOutput({ tempC: 21, tags: ['a'] });
    expect(out.toResponseItem('c', fn)).toEqual({ type: 'function_call_output', call_id: 'c', output: '{"tempC":21,"tags":["a"]}' });
    expect(out.codeModeResult()).toEqual({ tempC: 21, tags: ['a'] });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => new JsonToolOutput(circular as never)).toThrow(TypeError);
  });

  it('tool_search output, aborted and failure outputs follow the error table', () => {
    const found = new ToolSearchOutput([{ type: 'function', name: 'x', description: 'd', strict: false, defer_loading: true, parameters: { type: 'object' } }]);
    expect(found.toResponseItem('s1', search)).toEqual({
      type: 'tool_search_output',
      call_id: 's1',
      status: 'completed',
      execution: 'client',
      tools: [{ type: 'function', name: 'x', description: 'd', strict: false, defer_loading: true, parameters: { type: 'object' } }],
    });
    const aborted = new AbortedToolOutput(abortedMessage(2345));
    expect(aborted.success).toBeUndefined();
    expect(aborted.toResponseItem('a', fn)).toEqual({ type: 'function_call_output', call_id: 'a', output: 'aborted by user after 2.3s' });
    expect(aborted.toResponseItem('a', search)).toEqual({ type: 'tool_search_output', call_id: 'a', status: 'completed', execution: 'client', tools: [] });
    expect(abortedMessage(10)).toBe('aborted by user after 0.1s');
    expect(abortedMessage(1500, { style: 'shell' })).toBe('Wall time: 1.5 seconds\naborted by user');
    const failed = new FailureToolOutput('unsupported call: nope');
    expect(failed.success).toBe(false);
    expect(failed.toResponseItem('f', custom)).toEqual({ type: 'custom_tool_call_output', call_id: 'f', output: 'unsupported call: nope' });
    expect(failed.toResponseItem('f', search)).toEqual({ type: 'tool_search_output', call_id: 'f', status: 'completed', execution: 'client', tools: [] });
  });

  it('caps the log preview at 64 lines and 2 KiB', () => {
    const many = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const preview = FunctionToolOutput.text(many).logPreview();
    expect(preview.split('\n')).toHaveLength(65);
    expect(preview.endsWith(PREVIEW_TRUNCATED_SUFFIX)).toBe(true);
    const wide = FunctionToolOutput.text('é'.repeat(5000)).logPreview();
    expect(Buffer.byteLength(wide.replace(`\n${PREVIEW_TRUNCATED_SUFFIX}`, ''))).toBeLessThanOrEqual(2048);
    expect(FunctionToolOutput.text('short').logPreview()).toBe('short');
  });
});
