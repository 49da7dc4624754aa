import { describe, expect, it } from 'vitest';
import { commitFiles, type FileEntry } from './commit-files';
import type { WorkspaceFs } from './workspace-fs';

const added = (path: string): FileEntry => ({ path: `/w/${path}`, parts: path.split('/'), label: path, original: { kind: 'absent' }, current: Buffer.from('x\n') });

describe('commitFiles rollback', () => {
  it('removes every folder the patch created, whichever concurrent write recorded creating it', async () => {
    // Two writes race to create made/deep: the one that made `made` lost the race for `deep`, so
    // the write rolled back first (the deeper record) is not the one that created `made`.
    const folders = new Set<string>();
    const removed: string[] = [];
    const createdBy: Record<string, string[]> = { 'made/deep/a.txt': ['made', 'deep'], 'made/deep/b.txt': ['made'] };
    const fs = {
      async writeFileAtomic(parts: readonly string[]) {
        const label = parts.join('/');
        if (label === 'blocker/c.txt') throw Object.assign(new Error('File exists'), { code: 'EEXIST' });
        for (let depth = 1; depth < parts.length; depth++) folders.add(parts.slice(0, depth).join('/'));
        return createdBy[label];
      },
      async unlink() {},
      async symlink() {},
      async rmdir(parts: readonly string[]) {
        const path = parts.join('/');
        if (!folders.has(path)) throw Object.assign(new Error('No such file or directory'), { code: 'ENOENT' });
        if ([...folders].some((other) => other.startsWith(`${path}/`))) throw Object.assign(new Error('Directory not empty'), { code: 'ENOTEMPTY' });
        folders.delete(path);
        removed.push(path);
      },
    } as unknown as WorkspaceFs;
    await expect(commitFiles(fs, [added('made/deep/a.txt'), added('made/deep/b.txt'), added('blocker/c.txt')])).rejects.toMatchObject({
      code: 'WRITE_FAILED',
      message: 'Failed to create parent directories for blocker/c.txt: File exists. No files were changed.',
    });
    expect(removed).toEqual(['made/deep', 'made']);
    expect([...folders]).toEqual([]);
  });
});
