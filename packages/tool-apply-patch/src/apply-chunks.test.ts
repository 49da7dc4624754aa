import { describe, expect, it } from 'vitest';
import { applyChunks, usesCrlf } from './apply-chunks';
import { parsePatch, type UpdateChunk } from './parse-patch';

/** The chunks of a one-file Update patch body. */
function chunks(body: string): UpdateChunk[] {
  const [hunk] = parsePatch(`*** Begin Patch\n*** Update File: f.txt\n${body}\n*** End Patch`).hunks;
  if (hunk.type !== 'update') throw new Error('expected an update hunk');
  return hunk.chunks;
}

describe('applyChunks', () => {
  it('replaces located lines and keeps the rest', () => {
    expect(applyChunks('foo\nbar\nbaz\n', chunks('@@\n foo\n-bar\n+BAR'), 'f.txt')).toBe('foo\nBAR\nbaz\n');
  });

  it('applies several chunks in order, bottom-up', () => {
    expect(applyChunks('foo\nbar\nbaz\nqux\n', chunks('@@\n foo\n-bar\n+BAR\n+BAR2\n@@\n baz\n-qux\n+QUX'), 'f.txt')).toBe(
      'foo\nBAR\nBAR2\nbaz\nQUX\n',
    );
  });

  it('moves past a @@ context line before searching', () => {
    const original = 'def a():\n    pass\ndef b():\n    pass\n';
    expect(applyChunks(original, chunks('@@ def b():\n-    pass\n+    return 1'), 'f.txt')).toBe('def a():\n    pass\ndef b():\n    return 1\n');
  });

  it('appends a pure addition at the end of the file', () => {
    expect(applyChunks('one\ntwo\n', chunks('@@\n+three\n+four'), 'f.txt')).toBe('one\ntwo\nthree\nfour\n');
    // Before a final empty line (the reference quirk: that line then becomes the final newline).
    expect(applyChunks('one\n\n', chunks('@@\n+two'), 'f.txt')).toBe('one\ntwo\n');
    expect(applyChunks('', chunks('@@\n+first'), 'f.txt')).toBe('first\n');
  });

  it('matches an End of File chunk only at the end', () => {
    expect(applyChunks('x\ny\nx\n', chunks('@@\n-x\n+z\n*** End of File'), 'f.txt')).toBe('x\ny\nz\n');
    expect(() => applyChunks('x\ny\n', chunks('@@\n-x\n+z\n*** End of File'), 'f.txt')).toThrow('Failed to find expected lines in f.txt:\nx');
  });

  it('matches despite Unicode dashes in the file', () => {
    const original = 'const range = 1\u20135;\nconst quote = \u201Chi\u201D;\n';
    expect(applyChunks(original, chunks('@@\n-const range = 1-5;\n+const range = 1-6;'), 'f.txt')).toBe(
      'const range = 1-6;\nconst quote = \u201Chi\u201D;\n',
    );
  });

  it('always ends with a newline; an emptied file stays empty', () => {
    expect(applyChunks('a\nb', chunks('@@\n-b\n+c'), 'f.txt')).toBe('a\nc\n');
    expect(applyChunks('a\n', chunks('@@\n-a'), 'f.txt')).toBe('');
  });

  it('retries without a trailing empty line standing for the final newline', () => {
    expect(applyChunks('a\nb\n', chunks('@@\n a\n-b\n+c\n'), 'f.txt')).toBe('a\nc\n');
  });

  it('keeps CRLF files CRLF and LF files LF', () => {
    expect(usesCrlf('a\r\nb\r\n')).toBe(true);
    expect(usesCrlf('a\r\nb\n')).toBe(false);
    expect(applyChunks('a\r\nb\r\nc\r\n', chunks('@@\n a\n-b\n+B\n+B2'), 'f.txt')).toBe('a\r\nB\r\nB2\r\nc\r\n');
    expect(applyChunks('a\nb\r\nc\n', chunks('@@\n-b\n+B'), 'f.txt')).toBe('a\nB\nc\n');
  });

  it('keeps the ending of every line a mixed-ending file does not change (Codex\'s line-ending tests)', () => {
    // Untouched lines keep their own ending; the changed line takes the file's first ending.
    expect(applyChunks('one\r\ntwo\nthree\r\nfour\n', chunks('@@\n one\n two\n-three\n+THREE\n four'), 'f.txt')).toBe('one\r\ntwo\nTHREE\r\nfour\n');
    // A removed line among repeated ones: the kept context line keeps its LF.
    expect(applyChunks('same\r\nsame\n', chunks('@@\n-same\n same'), 'f.txt')).toBe('same\n');
    // Inserted lines and a final line break added to the last line use the first ending (CRLF).
    expect(applyChunks('a\r\nb\nc', chunks('@@\n a\n+new\n b'), 'f.txt')).toBe('a\r\nnew\r\nb\nc\r\n');
    expect(applyChunks('x\ny\r\nz\n', chunks('@@\n-x\n+X'), 'f.txt')).toBe('X\ny\r\nz\n');
    // Uniform files as before: CRLF everywhere, including a missing final line break.
    expect(applyChunks('one\r\ntwo', chunks('@@\n-one\n+ONE'), 'f.txt')).toBe('ONE\r\ntwo\r\n');
    expect(applyChunks('one\r\ntwo\r\nthree\r\n', chunks('@@\n-one\n+uno\n@@\n two\n+\n+between\n three'), 'f.txt')).toBe('uno\r\ntwo\r\n\r\nbetween\r\nthree\r\n');
  });

  it('names the missing context and the missing lines', () => {
    expect(() => applyChunks('a\n', chunks('@@ class Nope\n-a\n+b'), 'src/x.py')).toThrow("Failed to find context 'class Nope' in src/x.py");
    expect(() => applyChunks('a\n', chunks('@@\n-b\n-c\n+d'), 'src/x.py')).toThrow('Failed to find expected lines in src/x.py:\nb\nc');
  });
});
