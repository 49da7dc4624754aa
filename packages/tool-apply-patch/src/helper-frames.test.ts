import { describe, expect, it } from 'vitest';
import { FrameReader, encodeFrame } from './helper-frames';

describe('helper frames', () => {
  it('a header of several MiB (a patch naming thousands of files) is read, however its bytes are split', () => {
    const paths = Array.from({ length: 60_000 }, (_, index) => `folder-${index % 97}/file-${index}.txt`);
    const [line, blob] = encodeFrame({ type: 'verified', added: paths }, [Buffer.from('content')]);
    expect(line.length).toBeGreaterThan(1024 * 1024);
    const reader = new FrameReader(16 * 1024 * 1024);
    const bytes = Buffer.concat([line, blob]);
    const frames = [];
    for (let at = 0; at < bytes.length; at += 65_536) frames.push(...reader.push(bytes.subarray(at, at + 65_536)));
    expect(frames).toHaveLength(1);
    expect(frames[0].header.added).toEqual(paths);
    expect(frames[0].blobs.map((part) => part.toString())).toEqual(['content']);
  });

  it('a header that never ends is refused once it passes the frame limit', () => {
    const reader = new FrameReader(1024 * 1024);
    const chunk = Buffer.alloc(65_536, 'x');
    let error: unknown;
    try {
      for (let index = 0; index < 100; index++) reader.push(chunk);
    } catch (caught) {
      error = caught;
    }
    expect((error as Error).message).toBe('helper frame larger than 1048576 bytes');
    expect(reader.pending).toBeLessThanOrEqual(1024 * 1024 + 65_536);
  });
});
