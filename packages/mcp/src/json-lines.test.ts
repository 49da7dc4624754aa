import { describe, expect, it } from 'vitest';
import { JsonLineReader, recoverMessageId, salvageFirstText, type OversizedLine } from './json-lines';

function reader(limit: number) {
  const lines: string[] = [];
  const oversized: OversizedLine[] = [];
  const instance = new JsonLineReader(limit, { line: (text) => lines.push(text), oversized: (line) => oversized.push(line) });
  return { instance, lines, oversized };
}

describe('JsonLineReader', () => {
  it('splits lines across chunks, strips a trailing CR and skips blank lines', () => {
    const { instance, lines } = reader(1024);
    for (const piece of ['{"a":', '1}\r\n\n  \n{"b"', ':2}\n{"c":3}']) instance.push(Buffer.from(piece));
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    instance.push(Buffer.from('\n'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('keeps multi-byte characters split between chunks whole', () => {
    const { instance, lines } = reader(1024);
    const bytes = Buffer.from('{"t":"héllo ✓"}\n');
    instance.push(bytes.subarray(0, 8));
    instance.push(bytes.subarray(8));
    expect(lines).toEqual(['{"t":"héllo ✓"}']);
  });

  it('reports a line over the limit by its size and ends, then reads the next line normally', () => {
    const { instance, lines, oversized } = reader(100);
    const big = `{"result":{"content":[{"type":"text","text":"${'x'.repeat(500_000)}"}]},"jsonrpc":"2.0","id":7}`;
    for (let at = 0; at < big.length; at += 4096) instance.push(Buffer.from(big.slice(at, at + 4096)));
    instance.push(Buffer.from('\n{"ok":true}\n'));
    expect(lines).toEqual(['{"ok":true}']);
    expect(oversized).toHaveLength(1);
    expect(oversized[0].bytes).toBe(big.length);
    expect(oversized[0].head).toBe(big.slice(0, 256 * 1024));
    expect(oversized[0].tail).toBe(big.slice(-4096));
    expect(recoverMessageId(oversized[0])).toBe(7);
  });

  it('a line of exactly the limit is read; one byte more is not', () => {
    const { instance, lines, oversized } = reader(10);
    instance.push(Buffer.from('{"a":"12"}\n{"a":"123"}\n'));
    expect(lines).toEqual(['{"a":"12"}']);
    expect(oversized.map((line) => line.bytes)).toEqual([11]);
  });
});

describe('recoverMessageId', () => {
  const line = (head: string, tail = head): OversizedLine => ({ bytes: head.length, head, tail });

  it('finds the id last (the TypeScript SDK) or first (after jsonrpc, as most others write it)', () => {
    expect(recoverMessageId(line('{"result":{"content":[]},"jsonrpc":"2.0","id":12}'))).toBe(12);
    expect(recoverMessageId(line('{"method":"tools/call","params":{},"jsonrpc":"2.0","id":"a\\"b"}'))).toBe('a"b');
    expect(recoverMessageId(line('{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"abc', 'zzz"}]}}'))).toBe(3);
    expect(recoverMessageId(line('{"id":"x-1","jsonrpc":"2.0","result":{"text":"', 'x"}}'))).toBe('x-1');
  });

  it('gives up when neither end shows the id', () => {
    expect(recoverMessageId(line('{"result":{"content":[{"type":"text","text":"abc', 'def"}]}}'))).toBeUndefined();
    expect(recoverMessageId(line('{"method":"notifications/message","params":{"data":"', 'x"},"jsonrpc":"2.0"}'))).toBeUndefined();
  });
});

describe('salvageFirstText', () => {
  it('decodes the start of the first text block, stopping before a cut escape', () => {
    expect(salvageFirstText('{"result":{"content":[{"type":"text","text":"line 1\\nline 2 \\u00e9', 100)).toBe('line 1\nline 2 é');
    expect(salvageFirstText('{"content":[{"type":"text","text":"ab\\u00', 100)).toBe('ab');
    expect(salvageFirstText('{"content":[{"type":"text","text":"ab\\', 100)).toBe('ab');
    expect(salvageFirstText('{"content":[{"type":"text","text":"complete"},{"type":"text","text":"second"}]}', 100)).toBe('complete');
    expect(salvageFirstText('{"content":[{"type":"text","text":"abcdef', 3)).toBe('abc');
  });

  it('finds nothing in a result without text', () => {
    expect(salvageFirstText('{"content":[{"type":"image","data":"AAAA', 100)).toBeUndefined();
  });
});
