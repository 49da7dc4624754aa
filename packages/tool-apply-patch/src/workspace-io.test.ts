import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmod, mkdir, mkdtemp, readFile, readdir, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApplyPatchError } from './apply-patch-error';
import { applyPatch, verifyPatch } from './verify-patch';
import { useWorkspaceIo } from './workspace-io';
import { rejectionOf } from '@switchyard/test-helpers';
import { workspaceFolders, wrap } from './test-support';

let base: string;
let root: string;
let outside: string;

beforeEach(async () => ({ base, root, outside } = await workspaceFolders('apply-patch-io-')));
afterEach(async () => {
  useWorkspaceIo('async');
  await rm(base, { recursive: true, force: true });
});

/** Whether a `setImmediate` queued before `body` ran before `body` resolved (the event loop turned meanwhile). */
async function loopTurnedDuring(body: () => Promise<unknown>): Promise<boolean> {
  let turned = false;
  setImmediate(() => {
    turned = true;
  });
  await body();
  return turned;
}

describe.each(['sync', 'async'] as const)('the workspace walk with %s file calls', (mode) => {
  beforeEach(() => useWorkspaceIo(mode));

  it(mode === 'sync' ? 'never yields to the event loop while it patches (blocking calls: the helper process)' : 'yields to the event loop while it patches (the library in a host)', async () => {
    await Promise.all(Array.from({ length: 20 }, (_, index) => writeFile(join(root, `f${index}.txt`), 'a\n')));
    const patch = wrap(...Array.from({ length: 20 }, (_, index) => [`*** Update File: f${index}.txt`, '-a', '+b']).flat(), '*** Add File: new/deep/n.txt', '+n');
    expect(await loopTurnedDuring(() => applyPatch(patch, { root }))).toBe(mode === 'async');
    expect(await readFile(join(root, 'f19.txt'), 'utf8')).toBe('b\n');
    expect(await readFile(join(root, 'new', 'deep', 'n.txt'), 'utf8')).toBe('n\n');
  });

  it('a folder swapped for a link between verification and the write is caught; nothing lands outside', async () => {
    await mkdir(join(root, 'd'));
    await writeFile(join(outside, 'victim.txt'), 'original\n');
    const plan = await verifyPatch(wrap('*** Add File: d/victim.txt', '+pwned'), { root });
    await rename(join(root, 'd'), join(root, 'd.real'));
    await symlink(outside, join(root, 'd'));
    const error = await rejectionOf<ApplyPatchError>(plan.commit());
    expect(error.code).toBe('WRITE_FAILED');
    expect(error.message).toBe('Failed to write file d/victim.txt: d is a symbolic link. No files were changed.');
    expect(await readFile(join(outside, 'victim.txt'), 'utf8')).toBe('original\n');
    expect(await readdir(outside)).toEqual(['victim.txt']);
  });

  it('links are followed by the walk and must stay inside; .git is refused; a failed write rolls back; the mode is kept', async () => {
    await mkdir(join(root, 'real'));
    await writeFile(join(root, 'real', 'f.txt'), 'f\n');
    await symlink('real', join(root, 'rel'));
    await symlink(outside, join(root, 'out'));
    await applyPatch(wrap('*** Update File: rel/f.txt', '-f', '+g'), { root });
    expect(await readFile(join(root, 'real', 'f.txt'), 'utf8')).toBe('g\n');
    expect((await rejectionOf<ApplyPatchError>(applyPatch(wrap('*** Add File: out/x.txt', '+x'), { root }))).message).toBe("path 'out/x.txt' resolves outside the workspace root through a symbolic link");
    expect((await rejectionOf<ApplyPatchError>(applyPatch(wrap('*** Add File: sub/.git/config', '+x'), { root }))).message).toBe("path 'sub/.git/config' is inside .git, which apply_patch does not change");
    // A file where a folder must be created fails the second write: the first is undone.
    await writeFile(join(root, 'blocker'), 'file\n');
    const error = await rejectionOf<ApplyPatchError>(applyPatch(wrap('*** Update File: real/f.txt', '-g', '+h', '*** Add File: blocker/x.txt', '+x'), { root }));
    expect(error.code).toBe('WRITE_FAILED');
    expect(error.message).toBe('Failed to create parent directories for blocker/x.txt: File exists. No files were changed.');
    expect(await readFile(join(root, 'real', 'f.txt'), 'utf8')).toBe('g\n');
    expect(await readdir(outside)).toEqual([]);
    await chmod(join(root, 'real', 'f.txt'), 0o640);
    await applyPatch(wrap('*** Update File: real/f.txt', '-g', '+h'), { root });
    expect(await readFile(join(root, 'real', 'f.txt'), 'utf8')).toBe('h\n');
    // The file's mode is kept (the temporary file is given it before the rename).
    expect((await stat(join(root, 'real', 'f.txt'))).mode & 0o777).toBe(0o640);
    expect((await readdir(join(root, 'real'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});

describe('files replaced by a patch', () => {
  /** Descriptors of this process naming a file under `dir` (held `O_PATH` ones included), from /proc. */
  async function descriptorsUnder(dir: string): Promise<string[]> {
    const { readlink } = await import('node:fs/promises');
    const names = await readdir('/proc/self/fd');
    const targets = await Promise.all(names.map((name) => readlink(`/proc/self/fd/${name}`).catch(() => '')));
    return targets.filter((target) => target.startsWith(dir));
  }

  it.each(['sync', 'async'] as const)('are held only until the patch ends, then released (%s I/O), and the old contents are gone', async (mode) => {
    useWorkspaceIo(mode);
    const names = ['a.txt', 'b.txt', 'c.txt'];
    for (const name of names) await writeFile(join(root, name), `old ${name}\n`);
    const inodes = await Promise.all(names.map(async (name) => (await stat(join(root, name))).ino));
    await applyPatch(wrap(...names.flatMap((name) => [`*** Update File: ${name}`, `-old ${name}`, `+new ${name}`])), { root });
    for (const name of names) expect(await readFile(join(root, name), 'utf8')).toBe(`new ${name}\n`);
    // Each file was replaced by a new inode (written beside it, renamed over it).
    expect(await Promise.all(names.map(async (name) => (await stat(join(root, name))).ino))).not.toEqual(inodes);
    // The descriptors that held the replaced files close on the thread pool, unawaited: soon none is left.
    const deadline = Date.now() + 5_000;
    while ((await descriptorsUnder(root)).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await descriptorsUnder(root)).toEqual([]);
  });
});
