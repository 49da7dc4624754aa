import type { ToolPayload } from '@switchyard/protocol';
import { describe, expect, it } from 'vitest';
import { McpToolOutput, callToolResultBody, errorCallToolResult, normalizeCallToolResult } from './call-result';

const payload: ToolPayload = { kind: 'function', arguments: '{}' };

describe('normalizeCallToolResult', () => {
  it('keeps content, structuredContent and isError, and drops _meta and unknown fields', () => {
    expect(normalizeCallToolResult({ content: [{ type: 'text', text: 'a' }], structuredContent: { n: 1 }, isError: false, _meta: { x: 1 }, other: 2 })).toEqual({
      content: [{ type: 'text', text: 'a' }],
      structuredContent: { n: 1 },
      isError: false,
    });
  });

  it('fills a missing content array and isError, and ignores a non-object structuredContent', () => {
    expect(normalizeCallToolResult({ structuredContent: null })).toEqual({ content: [], isError: false });
    expect(normalizeCallToolResult({ content: 'nope', structuredContent: [1], isError: 'yes' })).toEqual({ content: [], isError: false });
  });
});

describe('callToolResultBody', () => {
  it('shows the content blocks even with structuredContent, and structuredContent only without content', () => {
    expect(callToolResultBody({ content: [{ type: 'text', text: 'shown' }], structuredContent: { a: [1, 2] }, isError: false })).toBe('[{"type":"text","text":"shown"}]');
    expect(callToolResultBody({ content: [], structuredContent: { a: [1, 2] }, isError: false })).toBe('{"a":[1,2]}');
    const image = { type: 'image', data: 'AAAA', mimeType: 'image/png' };
    expect(callToolResultBody({ content: [image], structuredContent: { content: [image] }, isError: false })).toEqual([
      { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
    ]);
  });

  it('ends a result with resource links with a note naming read_mcp_resource and the server', () => {
    const result = { content: [{ type: 'resource_link', uri: 'demo://a', name: 'a' }], isError: false };
    expect(callToolResultBody(result)).toBe('[{"type":"resource_link","uri":"demo://a","name":"a"}]');
    expect(callToolResultBody(result, 'docs')).toBe(
      '[{"type":"resource_link","uri":"demo://a","name":"a"}]\nRead a linked resource with `read_mcp_resource` ({"server":"docs","uri":"<its uri>"}).',
    );
  });

  it('keeps a data: URL image as is, names a missing mime type, and shows unknown blocks as JSON', () => {
    expect(
      callToolResultBody({
        content: [
          { type: 'image', data: 'data:image/gif;base64,R0lG' },
          { type: 'image', data: 'AAAA' },
          { type: 'resource_link', uri: 'file:///x' },
        ],
        isError: false,
      }),
    ).toEqual([
      { type: 'input_image', image_url: 'data:image/gif;base64,R0lG' },
      { type: 'input_image', image_url: 'data:application/octet-stream;base64,AAAA' },
      { type: 'input_text', text: '{"type":"resource_link","uri":"file:///x"}' },
    ]);
  });
});

describe('McpToolOutput', () => {
  it('formats the wall time with four decimals', () => {
    const output = new McpToolOutput({ content: [{ type: 'text', text: 'ok' }], isError: false }, { wallTimeMs: 1234.56789 });
    expect(output.toResponseItem('c1', payload)).toEqual({
      type: 'function_call_output',
      call_id: 'c1',
      output: 'Wall time: 1.2346 seconds\nOutput:\n[{"type":"text","text":"ok"}]',
    });
  });

  it('answers with the header and the JSON of an empty content array', () => {
    const output = new McpToolOutput({ content: [], isError: false }, { wallTimeMs: 5 });
    expect(output.toResponseItem('c1', payload)).toMatchObject({ output: 'Wall time: 0.0050 seconds\nOutput:\n[]' });
  });

  it('truncates the model-visible text to the budget ×1.2 while a cell keeps the full result', () => {
    const long = 'x'.repeat(400);
    const result = { content: [], structuredContent: { long }, isError: false };
    const output = new McpToolOutput(result, { wallTimeMs: 1, maxOutputTokens: 50 });
    const item = output.toResponseItem('c1', payload);
    const text = item.type === 'function_call_output' ? (item.output as string) : '';
    expect(Buffer.byteLength(text)).toBeLessThan(60 * 4 + 40);
    expect(text.startsWith('Wall time: 0.0010 seconds\nOutput:\n{"long":"xxx')).toBe(true);
    expect(text).toMatch(/…\d+ tokens truncated…x+"\}$/);
    expect(output.codeModeResult(payload)).toEqual(result);
  });

  it('marks an error result unsuccessful and exposes it unchanged to Code Mode and hooks', () => {
    const result = errorCallToolResult('tool call error: boom');
    const output = new McpToolOutput(result, { wallTimeMs: 0 });
    expect(output.success).toBe(false);
    expect(output.codeModeAlwaysResolves).toBe(true);
    expect(output.codeModeResult(payload)).toEqual({ content: [{ type: 'text', text: 'tool call error: boom' }], isError: true });
    expect(output.postToolUseResponse(payload)).toEqual(output.codeModeResult(payload));
    expect(output.logPreview()).toBe('Wall time: 0.0000 seconds\nOutput:\n[{"type":"text","text":"tool call error: boom"}]');
  });
});
