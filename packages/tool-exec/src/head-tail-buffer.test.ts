import { describe, expect, test } from 'vitest';
import { HeadTailBuffer } from './head-tail-buffer';

describe('HeadTailBuffer', () => {
  test('keeps everything under the cap and empties on drain', () => {
    const buffer = new HeadTailBuffer(100);
    buffer.push('hello ');
    buffer.push(Buffer.from('world'));
    expect(buffer.size).toBe(11);
    expect(buffer.drain()).toBe('hello world');
    expect(buffer.size).toBe(0);
    expect(buffer.drain()).toBe('');
  });

  test('over the cap keeps the head and the tail and drops the middle', () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push('HEAD_');
    for (let i = 0; i < 100; i++) buffer.push('x');
    buffer.push('_TAIL');
    expect(buffer.size).toBe(10);
    expect(buffer.droppedBytes).toBe(100);
    expect(buffer.drain()).toBe('HEAD__TAIL');
  });

  test('one large chunk is split between head and tail', () => {
    const buffer = new HeadTailBuffer(8);
    buffer.push('abcdefghijklmnopqrstuvwxyz');
    expect(buffer.drain()).toBe('abcdwxyz');
  });

  test('a multi-byte character split between two drains is decoded whole', () => {
    const buffer = new HeadTailBuffer(100);
    const bytes = Buffer.from('é', 'utf8');
    buffer.push(Buffer.concat([Buffer.from('a'), bytes.subarray(0, 1)]));
    expect(buffer.drain()).toBe('a');
    buffer.push(bytes.subarray(1));
    expect(buffer.drain()).toBe('é');
  });
});
