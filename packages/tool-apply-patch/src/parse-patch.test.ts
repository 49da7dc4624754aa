import { describe, expect, it } from 'vitest';
import { ApplyPatchError } from './apply-patch-error';
import { parsePatch } from './parse-patch';
import { wrap } from './test-support';

function parseError(text: string): ApplyPatchError {
  try {
    parsePatch(text);
  } catch (error) {
    return error as ApplyPatchError;
  }
  throw new Error('expected a parse error');
}

describe('parsePatch boundaries', () => {
  it('requires the Begin marker on the first line', () => {
    const error = parseError('bad');
    expect(error.code).toBe('INVALID_PATCH');
    expect(error.message).toBe("invalid patch: The first line of the patch must be '*** Begin Patch'");
  });

  it('requires the End marker on the last line', () => {
    expect(parseError('*** Begin Patch\nbad').message).toBe("invalid patch: The last line of the patch must be '*** End Patch'");
    expect(parseError('').message).toBe("invalid patch: The last line of the patch must be '*** End Patch'");
  });

  it('trims the text and the marker lines', () => {
    expect(parsePatch('\n\n*** Begin Patch \n*** Add File: foo\n+hi\n *** End Patch\n\n').hunks).toEqual([
      { type: 'add', path: 'foo', contents: 'hi\n' },
    ]);
  });

  it('parses Begin/End alone to zero hunks', () => {
    expect(parsePatch('*** Begin Patch\n*** End Patch')).toEqual({ hunks: [], patch: '*** Begin Patch\n*** End Patch' });
  });

  it('accepts CRLF patch text', () => {
    expect(parsePatch('*** Begin Patch\r\n*** Update File: a.txt\r\n-x\r\n+y\r\n*** End Patch\r\n').hunks).toEqual([
      { type: 'update', path: 'a.txt', chunks: [{ oldLines: ['x'], newLines: ['y'], isEndOfFile: false }] },
    ]);
  });
});

describe('parsePatch heredoc leniency', () => {
  const body = '*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch';
  const expected = [
    { type: 'update', path: 'file2.py', chunks: [{ oldLines: ['import foo'], newLines: ['import foo', 'bar'], isEndOfFile: false }] },
  ];

  it.each(['<<EOF', "<<'EOF'", '<<"EOF"'])('unwraps %s … EOF and keeps the inner text as the patch', (opener) => {
    expect(parsePatch(`${opener}\n${body}\nEOF\n`)).toEqual({ hunks: expected, patch: body });
  });

  it('refuses mismatched quotes with the strict error', () => {
    expect(parseError(`<<"EOF'\n${body}\nEOF\n`).message).toBe("invalid patch: The first line of the patch must be '*** Begin Patch'");
  });

  it('checks the inner lines again', () => {
    expect(parseError('<<EOF\n*** Begin Patch\n*** Update File: file2.py\nEOF\n').message).toBe(
      "invalid patch: The last line of the patch must be '*** End Patch'",
    );
  });
});

describe('parsePatch hunks', () => {
  it('parses add, delete and update with move and context', () => {
    const text = wrap(
      [
        '*** Add File: path/add.py',
        '+abc',
        '+def',
        '*** Delete File: path/delete.py',
        '*** Update File: path/update.py',
        '*** Move to: path/update2.py',
        '@@ def f():',
        '-    pass',
        '+    return 123',
      ].join('\n'),
    );
    expect(parsePatch(text).hunks).toEqual([
      { type: 'add', path: 'path/add.py', contents: 'abc\ndef\n' },
      { type: 'delete', path: 'path/delete.py' },
      {
        type: 'update',
        path: 'path/update.py',
        movePath: 'path/update2.py',
        chunks: [{ changeContext: 'def f():', oldLines: ['    pass'], newLines: ['    return 123'], isEndOfFile: false }],
      },
    ]);
  });

  it('keeps absolute paths as written', () => {
    expect(parsePatch(wrap('*** Delete File: /tmp/x/y.txt')).hunks).toEqual([{ type: 'delete', path: '/tmp/x/y.txt' }]);
  });

  it('ends an Add hunk at the first line without +, and allows empty added lines', () => {
    expect(parsePatch(wrap('*** Add File: a\n+one\n+\n+three\n*** Add File: b\n+x')).hunks).toEqual([
      { type: 'add', path: 'a', contents: 'one\n\nthree\n' },
      { type: 'add', path: 'b', contents: 'x\n' },
    ]);
  });

  it('ends an Update hunk at a line starting with *', () => {
    expect(parsePatch(wrap('*** Update File: file.py\n@@\n+line\n*** Add File: other.py\n+content')).hunks).toEqual([
      { type: 'update', path: 'file.py', chunks: [{ oldLines: [], newLines: ['line'], isEndOfFile: false }] },
      { type: 'add', path: 'other.py', contents: 'content\n' },
    ]);
  });

  it('lets the first chunk omit @@, skips blank lines between chunks, and reads empty lines as empty context', () => {
    const text = wrap(['*** Update File: f', '   ', ' a', '-b', '+B', '*** End of File', '', '@@ ctx', '', ' c', '-d', '+D'].join('\n'));
    expect(parsePatch(text).hunks).toEqual([
      {
        type: 'update',
        path: 'f',
        chunks: [
          { oldLines: ['a', 'b'], newLines: ['a', 'B'], isEndOfFile: true },
          { changeContext: 'ctx', oldLines: ['', 'c', 'd'], newLines: ['', 'c', 'D'], isEndOfFile: false },
        ],
      },
    ]);
    // Inside a chunk a whitespace-only line is a context line, not a separator.
    expect(parsePatch(wrap('*** Update File: f\n-a\n   \n+b')).hunks).toEqual([
      { type: 'update', path: 'f', chunks: [{ oldLines: ['a', '  '], newLines: ['  ', 'b'], isEndOfFile: false }] },
    ]);
  });

  it('trims hunk headers before matching', () => {
    expect(parsePatch(wrap('   *** Delete File: gone.txt   ')).hunks).toEqual([{ type: 'delete', path: 'gone.txt' }]);
  });
});

describe('parsePatch hunk errors carry the line number', () => {
  it('rejects an unknown header (first hunk is line 2)', () => {
    const error = parseError(wrap('*** Frobnicate File: x'));
    expect(error.code).toBe('INVALID_HUNK');
    expect(error.lineNumber).toBe(2);
    expect(error.message).toBe(
      "invalid hunk at line 2, '*** Frobnicate File: x' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
    );
  });

  it('counts lines across earlier hunks', () => {
    const error = parseError(wrap('*** Add File: a\n+1\n+2\n*** Delete File: b\nnonsense'));
    expect(error.lineNumber).toBe(6);
    expect(error.message).toMatch(/^invalid hunk at line 6, 'nonsense' is not a valid hunk header\./);
  });

  it('rejects an empty Update hunk', () => {
    expect(parseError(wrap('*** Update File: test.py')).message).toBe("invalid hunk at line 2, Update file hunk for path 'test.py' is empty");
  });

  it('requires @@ on later chunks', () => {
    const error = parseError(wrap('*** Update File: f\n-a\n+b\nbad'));
    expect(error.message).toBe("invalid hunk at line 5, Expected update hunk to start with a @@ context marker, got: 'bad'");
  });

  it('rejects an unexpected first chunk line', () => {
    const error = parseError(wrap('*** Update File: f\n@@\nbad'));
    expect(error.message).toBe(
      "invalid hunk at line 4, Unexpected line found in update hunk: 'bad'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)",
    );
  });

  it('rejects @@ with no lines after it', () => {
    expect(parseError('*** Begin Patch\n*** Update File: f\n@@\n*** End Patch').message).toBe(
      'invalid hunk at line 4, Update hunk does not contain any lines',
    );
    expect(parseError(wrap('*** Update File: f\n@@ a\n-x\n@@')).message).toBe('invalid hunk at line 6, Update hunk does not contain any lines');
  });

  it('rejects End of File with no lines before it', () => {
    expect(parseError(wrap('*** Update File: f\n@@\n*** End of File')).message).toBe(
      'invalid hunk at line 4, Update hunk does not contain any lines',
    );
    expect(parseError(wrap('*** Update File: f\n-a\n@@\n*** End of File\n+b')).message).toBe(
      'invalid hunk at line 5, Update hunk does not contain any lines',
    );
  });

  it('treats a Move to line only right after the header', () => {
    const error = parseError(wrap('*** Update File: f\n-a\n+b\n*** Move to: g'));
    expect(error.message).toBe(
      "invalid hunk at line 5, '*** Move to: g' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
    );
  });
});
