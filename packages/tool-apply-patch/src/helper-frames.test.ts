import { describe, expect, it } from 'vitest';
import { FrameReader, HelperFrameError, encodeFrame } from './helper-frames';
import { FROM_HELPER } from './helper-messages';

const verified = (added: string[]) => ({ t: 'verified' as const, summary: 'Success.', added, modified: [], deleted: [], changes: [], files: [] });

describe('helper frames', () => {
  it('a header of several MiB (a patch naming thousands of files) is read, however its bytes are split', () => {
    const paths = Array.from({ length: 60_000 }, (_, index) => `folder-${index % 97}/file-${index}.txt`);
    const [line, blob] = encodeFrame(verified(paths), [Buffer.from('content')]);
    expect(line.length).toBeGreaterThan(1024 * 1024);
    const reader = new FrameReader(FROM_HELPER, 16 * 1024 * 1024);
    const bytes = Buffer.concat([line, blob]);
    const frames = [];
    for (let at = 0; at < bytes.length; at += 65_536) frames.push(...reader.push(bytes.subarray(at, at + 65_536)));
    expect(frames).toHaveLength(1);
    expect(frames[0].message).toMatchObject({ t: 'verified', added: paths });
    expect(frames[0].blobs.map((part) => part.toString())).toEqual(['content']);
  });

  it('a header that never ends is refused once it passes the frame limit', () => {
    const reader = new FrameReader(FROM_HELPER, 1024 * 1024);
    const chunk = Buffer.alloc(65_536, 'x');
    let error: unknown;
    try {
      for (let index = 0; index < 100; index++) reader.push(chunk);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(HelperFrameError);
    expect({ problem: (error as HelperFrameError).problem, message: (error as Error).message }).toEqual({ problem: 'oversized', message: 'helper frame larger than 1048576 bytes' });
    expect(reader.pending).toBeLessThanOrEqual(1024 * 1024 + 65_536);
  });

  it('cuts blobs out as their chunks arrive: a blob inside one chunk is a view of it, one across chunks a copy of its own; the frame is never copied whole', () => {
    const blobs = Array.from({ length: 200 }, (_, index) => Buffer.alloc(10_000 + index, 97 + (index % 26)));
    const bytes = Buffer.concat(encodeFrame(verified([]), blobs));
    const reader = new FrameReader(FROM_HELPER, 64 * 1024 * 1024);
    const chunks: Buffer[] = [];
    const frames = [];
    for (let at = 0; at < bytes.length; at += 65_536) {
      // Each chunk in memory of its own, as a pipe delivers it.
      const chunk = Buffer.from(bytes.subarray(at, at + 65_536));
      chunks.push(chunk);
      frames.push(...reader.push(chunk));
    }
    expect(frames).toHaveLength(1);
    const received = frames[0].blobs;
    expect(received.map((blob) => blob.length)).toEqual(blobs.map((blob) => blob.length));
    for (const [index, blob] of received.entries()) expect(blob.equals(blobs[index])).toBe(true);
    const views = received.filter((blob) => chunks.some((chunk) => chunk.buffer === blob.buffer));
    const copies = received.filter((blob) => !chunks.some((chunk) => chunk.buffer === blob.buffer));
    // ~10 kB blobs in 64 KiB chunks: most lie inside one chunk; the rest (at most one per chunk boundary) are copied alone.
    expect(views.length).toBeGreaterThan(150);
    expect(copies.length).toBeLessThanOrEqual(chunks.length);
    // No buffer behind a blob holds the whole frame (a copy may sit in Node's small-buffer pool).
    expect(received.every((blob) => blob.buffer.byteLength < bytes.length)).toBe(true);
  });
});
