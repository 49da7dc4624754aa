import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { checkWritePath } from './policy';
import { isProtectedPath, protectedPaths } from './protected-paths';
import { makeWorkspace } from './test-support';

describe('protected paths', () => {
  test('<root>/.git is listed whether or not it exists; nested .git dirs and gitfiles are found', () => {
    const root = makeWorkspace();
    mkdirSync(join(root, 'sub', '.git'), { recursive: true });
    mkdirSync(join(root, 'deep', 'er'), { recursive: true });
    mkdirSync(join(root, 'node_modules', 'dep', '.git'), { recursive: true }); // not walked
    writeFileSync(join(root, 'deep', 'er', '.git'), 'gitdir: ../../.git/modules/er\n');
    const list = protectedPaths({ root });
    expect(list).toEqual(
      expect.arrayContaining([
        { path: join(root, '.git'), kind: 'root-git', root, exists: false },
        { path: join(root, 'sub', '.git'), kind: 'nested-git', root, exists: true },
        { path: join(root, 'deep', 'er', '.git'), kind: 'nested-git', root, exists: true },
      ]),
    );
    expect(list).toHaveLength(3);
  });

  test('writable roots each get their own entries; links are not followed while walking', () => {
    const root = makeWorkspace();
    const extra = makeWorkspace();
    const elsewhere = makeWorkspace();
    mkdirSync(join(elsewhere, 'x', '.git'), { recursive: true });
    symlinkSync(elsewhere, join(root, 'link'));
    const paths = protectedPaths({ root, writableRoots: [extra] }).map((entry) => entry.path);
    expect(paths.sort()).toEqual([join(root, '.git'), join(extra, '.git')].sort());
  });

  test('isProtectedPath: inside a listed entry, through a link, or any new .git component', () => {
    const root = makeWorkspace();
    mkdirSync(join(root, '.git', 'hooks'), { recursive: true });
    symlinkSync(join(root, '.git'), join(root, 'innocent'));
    const list = protectedPaths({ root });
    expect(isProtectedPath(join(root, '.git', 'hooks', 'pre-commit'), list)).toBe(true);
    expect(isProtectedPath(join(root, 'innocent', 'config'), list)).toBe(true);
    expect(isProtectedPath(join(root, 'new', '.git', 'config'), list)).toBe(true);
    expect(isProtectedPath(join(root, 'src', 'git.ts'), list)).toBe(false);
    expect(isProtectedPath(join(root, '.github', 'workflow.yml'), list)).toBe(false);
  });

  test('checkWritePath answers per mode, and names the reason', () => {
    const root = makeWorkspace();
    const policy = { mode: 'workspace-write' as const, root };
    expect(checkWritePath(join(root, 'a.txt'), policy)).toEqual({ ok: true, path: join(root, 'a.txt') });
    expect(checkWritePath(join(root, '.git', 'config'), policy)).toMatchObject({ ok: false, reason: 'it is a protected path (.git stays read-only)' });
    expect(checkWritePath('/etc/passwd', policy)).toMatchObject({ ok: false, reason: 'it is outside the writable roots' });
    symlinkSync('/etc', join(root, 'etc'));
    expect(checkWritePath(join(root, 'etc', 'passwd'), policy)).toMatchObject({ ok: false, path: '/etc/passwd', reason: 'it is outside the writable roots' });
    expect(checkWritePath(join(root, 'a.txt'), { mode: 'read-only', root })).toMatchObject({ ok: false, reason: 'the sandbox is read-only' });
    expect(checkWritePath('/etc/passwd', { mode: 'danger-full-access', root })).toMatchObject({ ok: true });
  });
});
