import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmod, lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplyPatchError } from './apply-patch-error';
import { applyPatch, verifyPatch } from './verify-patch';
import { patchFailure, wrap } from './test-support';

let root: string;
let outside: string;

beforeEach(async () => {
  const base = await mkdtemp(join(tmpdir(), 'apply-patch-'));
  root = join(base, 'workspace');
  outside = join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
});

afterEach(async () => {
  await rm(join(root, '..'), { recursive: true, force: true });
});

const read = (path: string) => readFile(join(root, path), 'utf8');
const put = async (path: string, content: string | Buffer) => {
  await mkdir(join(root, path, '..'), { recursive: true });
  await writeFile(join(root, path), content);
};

/** Every file under the root with its bytes, to prove "nothing changed, byte for byte". */
async function contentsUnder(folder = root): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name);
    out[path.slice(folder.length + 1)] = entry.isFile() ? (await readFile(path)).toString('base64') : '<dir>';
  }
  return out;
}

describe('applyPatch', () => {
  it('adds, updates and deletes, and prints the A/M/D summary in that order', async () => {
    await put('update.txt', 'foo\nbar\n');
    await put('delete.txt', 'bye\n');
    const result = await applyPatch(
      wrap('*** Delete File: delete.txt', '*** Update File: update.txt', '@@', ' foo', '-bar', '+baz', '*** Add File: nested/dir/add.txt', '+ab', '+cd'),
      { root },
    );
    expect(result.summary).toBe('Success. Updated the following files:\nA nested/dir/add.txt\nM update.txt\nD delete.txt\n');
    expect(result.added).toEqual(['nested/dir/add.txt']);
    expect(await read('nested/dir/add.txt')).toBe('ab\ncd\n');
    expect(await read('update.txt')).toBe('foo\nbaz\n');
    expect(existsSync(join(root, 'delete.txt'))).toBe(false);
  });

  it('reports each hunk with a unified diff', async () => {
    await put('a.txt', 'one\ntwo\nthree\nfour\n');
    await put('b.txt', 'gone\n');
    const result = await applyPatch(wrap('*** Update File: a.txt', '@@', '-two', '+TWO', '*** Delete File: b.txt', '*** Add File: c.txt', '+new'), { root });
    expect(result.changes).toEqual([
      { kind: 'update', path: 'a.txt', newContent: 'one\nTWO\nthree\nfour\n', unifiedDiff: '@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n' },
      { kind: 'delete', path: 'b.txt', content: 'gone\n', unifiedDiff: '@@ -1,1 +0,0 @@\n-gone\n' },
      { kind: 'add', path: 'c.txt', content: 'new\n', unifiedDiff: '@@ -0,0 +1,1 @@\n+new\n' },
    ]);
  });

  it('moves a file: writes the destination (creating folders), removes the source, lists it as modified', async () => {
    await put('src/old.txt', 'line\n');
    const result = await applyPatch(wrap('*** Update File: src/old.txt', '*** Move to: dst/deep/new.txt', '@@', '-line', '+line2'), { root });
    expect(result.summary).toBe('Success. Updated the following files:\nM dst/deep/new.txt\n');
    expect(result.changes).toEqual([
      { kind: 'update', path: 'src/old.txt', movePath: 'dst/deep/new.txt', newContent: 'line2\n', unifiedDiff: '@@ -1,1 +1,1 @@\n-line\n+line2\n' },
    ]);
    expect(existsSync(join(root, 'src/old.txt'))).toBe(false);
    expect(await read('dst/deep/new.txt')).toBe('line2\n');
  });

  it('an Add over an existing file overwrites it', async () => {
    await put('exists.txt', 'old content\n');
    await applyPatch(wrap('*** Add File: exists.txt', '+new content'), { root });
    expect(await read('exists.txt')).toBe('new content\n');
  });

  it('later hunks see earlier ones, in patch order', async () => {
    await put('f.txt', 'a\n');
    // g.txt does not exist yet, so deleting it first fails the patch as a whole and f.txt is untouched.
    const error = await patchFailure(root, wrap('*** Update File: f.txt', '-a', '+b', '*** Update File: f.txt', '-b', '+c', '*** Delete File: g.txt', '*** Add File: g.txt', '+g'));
    expect(error.message).toBe(`Failed to read ${root}/g.txt: No such file or directory (os error 2)`);
    expect(await read('f.txt')).toBe('a\n');
    await applyPatch(wrap('*** Update File: f.txt', '-a', '+b', '*** Update File: f.txt', '-b', '+c', '*** Add File: g.txt', '+g', '*** Delete File: g.txt'), { root });
    expect(await read('f.txt')).toBe('c\n');
    expect(existsSync(join(root, 'g.txt'))).toBe(false);
  });

  it('keeps CRLF line endings and the file mode', async () => {
    await put('win.txt', 'a\r\nb\r\n');
    await chmod(join(root, 'win.txt'), 0o751);
    await applyPatch(wrap('*** Update File: win.txt', '-b', '+c'), { root });
    expect(await read('win.txt')).toBe('a\r\nc\r\n');
    expect((await stat(join(root, 'win.txt'))).mode & 0o777).toBe(0o751);
  });

  it('keeps the ending of each untouched line of a mixed CRLF/LF file, on disk', async () => {
    await put('mixed.txt', 'one\r\ntwo\nthree\r\nfour\n');
    const result = await applyPatch(wrap('*** Update File: mixed.txt', '@@', ' one', ' two', '-three', '+THREE', ' four'), { root });
    expect(await readFile(join(root, 'mixed.txt'))).toEqual(Buffer.from('one\r\ntwo\nTHREE\r\nfour\n'));
    expect(result.changes[0]).toMatchObject({ newContent: 'one\r\ntwo\nTHREE\r\nfour\n', unifiedDiff: '@@ -2,3 +2,3 @@\n two\n-three\r\n+THREE\r\n four\n' });
  });

  it('leaves no temporary files behind', async () => {
    await put('a.txt', 'x\n');
    await applyPatch(wrap('*** Update File: a.txt', '-x', '+y', '*** Add File: b/c.txt', '+z'), { root });
    expect(Object.keys(await contentsUnder()).sort()).toEqual(['a.txt', 'b', 'b/c.txt']);
  });

  it('refuses an empty patch with "No files were modified."', async () => {
    const error = await patchFailure(root, '*** Begin Patch\n*** End Patch');
    expect(error.code).toBe('NO_CHANGES');
    expect(error.message).toBe('No files were modified.');
  });
});

describe('verification failures change nothing', () => {
  it('deleting a missing file', async () => {
    const error = await patchFailure(root, wrap('*** Delete File: missing.txt'));
    expect(error.code).toBe('VERIFICATION_FAILED');
    // absolute paths and the OS error number, as the reference names them
    expect(error.message).toBe(`Failed to read ${root}/missing.txt: No such file or directory (os error 2)`);
  });

  it('deleting a directory', async () => {
    await mkdir(join(root, 'folder'));
    expect((await patchFailure(root, wrap('*** Delete File: folder'))).message).toBe(`Failed to read ${root}/folder: path \`${root}/folder\` is not a file`);
  });

  it('a named pipe, or a link to one, is refused at once as not a file (the library never waits in open)', async () => {
    execFileSync('mkfifo', [join(root, 'pipe')]);
    await symlink('pipe', join(root, 'link'));
    const notAFile = (path: string) => `path \`${root}/${path}\` is not a file (a named pipe)`;
    for (const [section, message] of [
      ['*** Update File: pipe\n-a\n+b', `Failed to read file to update ${root}/pipe: ${notAFile('pipe')}`],
      ['*** Delete File: link', `Failed to read ${root}/link: ${notAFile('link')}`],
      ['*** Add File: link\n+b', `Failed to write file link: ${notAFile('link')}`],
      ['*** Update File: x\n*** Move to: pipe\n-a\n+b', `Failed to write file pipe: ${notAFile('pipe')}`],
    ]) {
      await put('x', 'a\n');
      const error = await patchFailure(root, wrap(section));
      expect({ code: error.code, message: error.message }).toEqual({ code: 'VERIFICATION_FAILED', message });
    }
    expect((await lstat(join(root, 'pipe'))).isFIFO()).toBe(true);
  });

  it('updating a missing file', async () => {
    expect((await patchFailure(root, wrap('*** Update File: nope.txt', '-a', '+b'))).message).toBe(
      `Failed to read file to update ${root}/nope.txt: No such file or directory (os error 2)`,
    );
  });

  it('updating a file that is not UTF-8', async () => {
    await put('bin.dat', Buffer.from([0xff, 0xfe, 0x00, 0x41, 0x0a]));
    expect((await patchFailure(root, wrap('*** Update File: bin.dat', '-A', '+B'))).message).toBe(
      `Failed to read file to update ${root}/bin.dat: stream did not contain valid UTF-8`,
    );
  });

  it('a later hunk that does not match leaves every file byte for byte', async () => {
    await put('one.txt', 'first\nsecond\n');
    await put('two.txt', 'alpha\nbeta\n');
    await put('three.txt', 'keep me\n');
    await put('crlf.txt', 'x\r\ny\r\n');
    const before = await contentsUnder();
    const error = await patchFailure(root, 
      wrap(
        '*** Update File: one.txt',
        '-first',
        '+FIRST',
        '*** Add File: brand/new.txt',
        '+hello',
        '*** Delete File: three.txt',
        '*** Update File: crlf.txt',
        '*** Move to: moved.txt',
        '-x',
        '+X',
        '*** Update File: two.txt',
        '@@',
        '-alpha',
        '+ALPHA',
        '@@',
        '-gamma',
        '+GAMMA',
      ),
    );
    expect(error.code).toBe('VERIFICATION_FAILED');
    expect(error.message).toBe(`Failed to find expected lines in ${root}/two.txt:\ngamma`);
    expect(await contentsUnder()).toEqual(before);
  });
});

describe('all or nothing when a write fails midway', () => {
  it('restores the files already written and removes created folders', async () => {
    await put('a.txt', 'original a\n');
    await put('blocker', 'I am a file, not a folder\n');
    await put('gone.txt', 'still here\n');
    const before = await contentsUnder();
    const error = await patchFailure(root, 
      wrap(
        '*** Update File: a.txt',
        '-original a',
        '+patched a',
        '*** Add File: made/deep/file.txt',
        '+x',
        '*** Add File: made/deep/other.txt',
        '+x',
        '*** Add File: made/top.txt',
        '+x',
        '*** Add File: made/deep/er/still.txt',
        '+x',
        '*** Add File: blocker/inside.txt',
        '+y',
        '*** Delete File: gone.txt',
      ),
    );
    expect(error.code).toBe('WRITE_FAILED');
    expect(error.message).toBe('Failed to create parent directories for blocker/inside.txt: File exists. No files were changed.');
    expect(error.unrestoredPaths).toEqual([]);
    expect(await contentsUnder()).toEqual(before);
  });

  it('a directory where a moved file should land is caught before writing', async () => {
    await put('src.txt', 'a\n');
    await mkdir(join(root, 'dest'));
    const before = await contentsUnder();
    expect((await patchFailure(root, wrap('*** Update File: src.txt', '*** Move to: dest', '-a', '+b'))).message).toBe('Failed to write file dest: Is a directory');
    expect(await contentsUnder()).toEqual(before);
  });

  it('an abort before writing refuses the patch', async () => {
    await put('a.txt', 'a\n');
    const controller = new AbortController();
    controller.abort();
    const error = await applyPatch(wrap('*** Update File: a.txt', '-a', '+b'), { root, signal: controller.signal }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'ABORTED', message: 'apply_patch was aborted before any file was written' });
    expect(await read('a.txt')).toBe('a\n');
  });

  it('a plan can be inspected first and committed once', async () => {
    await put('a.txt', 'a\n');
    const plan = await verifyPatch(wrap('*** Update File: a.txt', '-a', '+b'), { root });
    expect(await read('a.txt')).toBe('a\n');
    expect(plan.files).toEqual([{ path: join(root, 'a.txt'), displayPath: 'a.txt', before: 'a\n', after: 'b\n' }]);
    await plan.commit();
    expect(await read('a.txt')).toBe('b\n');
    await expect(plan.commit()).rejects.toThrow('this patch plan was already committed');
  });
});

describe('paths outside the workspace root', () => {
  it('refuses .. and absolute paths elsewhere', async () => {
    const dotdot = await patchFailure(root, wrap('*** Add File: ../outside/evil.txt', '+x'));
    expect(dotdot.code).toBe('PATH_OUTSIDE_ROOT');
    expect(dotdot.message).toBe("path '../outside/evil.txt' resolves outside the workspace root");
    const absolute = join(outside, 'evil.txt');
    expect((await patchFailure(root, wrap(`*** Add File: ${absolute}`, '+x'))).message).toBe(`path '${absolute}' resolves outside the workspace root`);
    await put('in.txt', 'a\n');
    expect((await patchFailure(root, wrap('*** Update File: in.txt', '*** Move to: ../outside/moved.txt', '-a', '+b'))).code).toBe('PATH_OUTSIDE_ROOT');
    expect(await readdir(outside)).toEqual([]);
    expect(await read('in.txt')).toBe('a\n');
  });

  it('refuses a symbolic link that leaves the root, for files and folders', async () => {
    await writeFile(join(outside, 'secret.txt'), 'secret\n');
    await symlink(join(outside, 'secret.txt'), join(root, 'link.txt'));
    await symlink(outside, join(root, 'linkdir'));
    expect((await patchFailure(root, wrap('*** Update File: link.txt', '-secret', '+pwned'))).message).toBe(
      "path 'link.txt' resolves outside the workspace root through a symbolic link",
    );
    expect((await patchFailure(root, wrap('*** Add File: linkdir/new.txt', '+x'))).code).toBe('PATH_OUTSIDE_ROOT');
    await symlink(join(outside, 'nothing'), join(root, 'dangling'));
    expect((await patchFailure(root, wrap('*** Add File: dangling', '+x'))).message).toBe(
      "path 'dangling' resolves outside the workspace root (it is a dangling symbolic link)",
    );
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
    expect(await readdir(outside)).toEqual(['secret.txt']);
  });

  it('accepts absolute paths inside the root, and links that stay inside (writing through them)', async () => {
    await put('real.txt', 'a\n');
    await symlink(join(root, 'real.txt'), join(root, 'alias.txt'));
    await applyPatch(wrap(`*** Update File: ${join(root, 'alias.txt')}`, '-a', '+b'), { root });
    expect(await read('real.txt')).toBe('b\n');
    expect((await stat(join(root, 'alias.txt'))).isFile()).toBe(true);
  });

  it('allows outside paths when the host says so', async () => {
    const result = await applyPatch(wrap('*** Add File: ../outside/allowed.txt', '+ok'), { root, allowOutsideRoot: true });
    expect(result.summary).toBe('Success. Updated the following files:\nA ../outside/allowed.txt\n');
    expect(await readFile(join(outside, 'allowed.txt'), 'utf8')).toBe('ok\n');
  });
});

describe('a workspace root reached through a symbolic link', () => {
  // The session's cwd is `linked` (→ `root`): every hunk on one file must land on one entry.
  let linked: string;
  beforeEach(async () => {
    linked = join(root, '..', 'link');
    await symlink(root, linked);
  });
  const applyLinked = (patch: string) => applyPatch(patch, { root: linked });
  async function linkedFailure(patch: string): Promise<ApplyPatchError> {
    try {
      await applyLinked(patch);
    } catch (error) {
      return error as ApplyPatchError;
    }
    throw new Error('expected applyPatch to fail');
  }

  it('applies a normal patch (add, update, delete, move) and reports paths relative to the root', async () => {
    await put('update.txt', 'foo\n');
    await put('delete.txt', 'bye\n');
    await put('move.txt', 'm\n');
    const result = await applyLinked(
      wrap(
        '*** Add File: sub/add.txt',
        '+new',
        '*** Update File: update.txt',
        '-foo',
        '+bar',
        '*** Delete File: delete.txt',
        '*** Update File: move.txt',
        '*** Move to: moved/m.txt',
        '-m',
        '+n',
      ),
    );
    expect(result.summary).toBe('Success. Updated the following files:\nA sub/add.txt\nM update.txt\nM moved/m.txt\nD delete.txt\n');
    expect(result.files.map((file) => [file.displayPath, file.before, file.after])).toEqual([
      ['sub/add.txt', null, 'new\n'],
      ['update.txt', 'foo\n', 'bar\n'],
      ['delete.txt', 'bye\n', null],
      ['move.txt', 'm\n', null],
      ['moved/m.txt', null, 'n\n'],
    ]);
    expect(await contentsUnder()).toEqual({
      sub: '<dir>',
      'sub/add.txt': Buffer.from('new\n').toString('base64'),
      'update.txt': Buffer.from('bar\n').toString('base64'),
      moved: '<dir>',
      'moved/m.txt': Buffer.from('n\n').toString('base64'),
    });
  });

  it('Delete then Add of the same path leaves the added content (hunks apply in order)', async () => {
    await put('a.txt', 'old\n');
    const result = await applyLinked(wrap('*** Delete File: a.txt', '*** Add File: a.txt', '+new'));
    expect(result.summary).toBe('Success. Updated the following files:\nA a.txt\nD a.txt\n');
    expect(result.files).toHaveLength(1);
    expect(result.files[0]).toMatchObject({ displayPath: 'a.txt', before: 'old\n', after: 'new\n' });
    expect(await read('a.txt')).toBe('new\n');
  });

  it('Delete then Add through a spelled-out absolute path is the same file', async () => {
    await put('a.txt', 'old\n');
    await applyLinked(wrap(`*** Delete File: ${join(linked, 'a.txt')}`, `*** Add File: ${join(root, 'a.txt')}`, '+new'));
    expect(await read('a.txt')).toBe('new\n');
  });

  it('Update then Delete of the same path deletes it; Delete then Update is refused', async () => {
    await put('a.txt', 'old\n');
    const result = await applyLinked(wrap('*** Update File: a.txt', '-old', '+mid', '*** Delete File: a.txt'));
    expect(result.files).toHaveLength(1);
    expect(result.files[0]).toMatchObject({ before: 'old\n', after: null });
    expect(result.changes[1]).toMatchObject({ kind: 'delete', content: 'mid\n' });
    expect(existsSync(join(root, 'a.txt'))).toBe(false);

    await put('b.txt', 'old\n');
    const error = await linkedFailure(wrap('*** Delete File: b.txt', '*** Update File: b.txt', '-old', '+new'));
    expect(error.code).toBe('VERIFICATION_FAILED');
    expect(error.message).toBe(`Failed to read file to update ${linked}/b.txt: No such file or directory (os error 2)`);
    expect(await read('b.txt')).toBe('old\n');
  });

  it('Delete twice of the same path is refused', async () => {
    await put('a.txt', 'old\n');
    const error = await linkedFailure(wrap('*** Delete File: a.txt', `*** Delete File: ${join(root, 'a.txt')}`));
    expect(error.message).toBe(`Failed to read ${join(root, 'a.txt')}: No such file or directory (os error 2)`);
    expect(await read('a.txt')).toBe('old\n');
  });

  it('Add then Update of the same path updates the added content', async () => {
    const result = await applyLinked(wrap('*** Add File: a.txt', '+one', '*** Update File: a.txt', '-one', '+two'));
    expect(result.files).toHaveLength(1);
    expect(result.files[0]).toMatchObject({ displayPath: 'a.txt', before: null, after: 'two\n' });
    expect(await read('a.txt')).toBe('two\n');
  });
});

describe('hunks on a symbolic link inside the root', () => {
  it('Delete removes the link itself; a later Add on that path makes a plain file and leaves the target', async () => {
    await put('real.txt', 'real\n');
    await symlink(join(root, 'real.txt'), join(root, 'alias.txt'));
    await applyPatch(wrap('*** Delete File: alias.txt', '*** Add File: alias.txt', '+plain'), { root });
    expect(await read('real.txt')).toBe('real\n');
    expect((await lstat(join(root, 'alias.txt'))).isSymbolicLink()).toBe(false);
    expect(await read('alias.txt')).toBe('plain\n');
  });

  it('Update through a link then Delete of the link: the target keeps the update, the link goes', async () => {
    await put('real.txt', 'a\n');
    await symlink(join(root, 'real.txt'), join(root, 'alias.txt'));
    await applyPatch(wrap('*** Update File: alias.txt', '-a', '+b', '*** Delete File: alias.txt'), { root });
    expect(await read('real.txt')).toBe('b\n');
    expect(existsSync(join(root, 'alias.txt'))).toBe(false);
  });

  it('Delete of a link then Update of that path is refused', async () => {
    await put('real.txt', 'a\n');
    await symlink(join(root, 'real.txt'), join(root, 'alias.txt'));
    const error = await patchFailure(root, wrap('*** Delete File: alias.txt', '*** Update File: alias.txt', '-a', '+b'));
    expect(error.message).toBe(`Failed to read file to update ${root}/alias.txt: No such file or directory (os error 2)`);
    expect((await lstat(join(root, 'alias.txt'))).isSymbolicLink()).toBe(true);
  });

  it('moving a link writes the destination and removes the link, not its target', async () => {
    await put('real.txt', 'a\n');
    await symlink(join(root, 'real.txt'), join(root, 'alias.txt'));
    await applyPatch(wrap('*** Update File: alias.txt', '*** Move to: moved.txt', '-a', '+b'), { root });
    expect(await read('real.txt')).toBe('a\n');
    expect(await read('moved.txt')).toBe('b\n');
    expect(existsSync(join(root, 'alias.txt'))).toBe(false);
  });
});
