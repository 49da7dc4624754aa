import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { PLATFORM_READ_ROOTS } from './filesystem-view';
import { runIn } from './test-support';

// These tests need bubblewrap and fail without it. A data directory outside the places the sandbox
// hides (/tmp, /root, /home, /run) is what a server keeps its tenants' workspaces in: /var/tmp here.
const asRoot = process.geteuid?.() === 0;
const data: string[] = [];
afterAll(() => {
  for (const dir of data) {
    chmodSync(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A data directory with two tenants' workspaces and a file of the host's own (its database). */
function dataDirectory(): { dir: string; a: string; b: string } {
  const dir = realpathSync(mkdtempSync('/var/tmp/sandbox-tenants-'));
  data.push(dir);
  const a = join(dir, 'tenants', 'a');
  const b = join(dir, 'tenants', 'b');
  mkdirSync(a, { recursive: true });
  mkdirSync(b, { recursive: true });
  writeFileSync(join(a, 'secret.txt'), 'a-secret\n');
  writeFileSync(join(b, 'own.txt'), 'b-own\n');
  writeFileSync(join(dir, 'sessions.db-wal'), 'every tenant history\n');
  return { dir, a, b };
}

describe('a data directory at mode 0700', () => {
  test('sandboxed commands in a workspace inside it run, and see nothing else of it (full view)', async () => {
    const { dir, a, b } = dataDirectory();
    chmodSync(dir, 0o700);
    const { code, output } = await runIn({ mode: 'workspace-write', root: b }, `exec 2>&1; cat own.txt && echo new > new.txt && cat new.txt; cat ${a}/secret.txt; cat ${dir}/sessions.db-wal; ls -A ${dir}`);
    expect(output).not.toContain('bwrap');
    expect(output).toContain('b-own\nnew\n');
    expect(output).not.toContain('a-secret');
    expect(output).not.toContain('every tenant history');
    // as root the directory is hidden under a tmpfs holding only the mount point of the workspace
    // (one stream, `exec 2>&1`: the errors above come before the listing)
    if (asRoot) expect(output).toMatch(/\ntenants\n$/);
    expect(code).toBe(0);
    expect(readFileSync(join(b, 'new.txt'), 'utf8')).toBe('new\n');
  });
});

describe('the full read view, for comparison', () => {
  test('a data directory every user may search shows the other workspaces: what the restricted view is for', async () => {
    const { dir, a, b } = dataDirectory();
    chmodSync(dir, 0o755);
    const { code, output } = await runIn({ mode: 'workspace-write', root: b }, `cat ${a}/secret.txt ${dir}/sessions.db-wal`);
    expect({ code, output }).toEqual({ code: 0, output: 'a-secret\nevery tenant history\n' });
  });
});

describe('the restricted read view (readableRoots)', () => {
  test('shows the platform directories, the workspace and the listed roots, nothing else; / is read-only', async () => {
    const { dir, a, b } = dataDirectory();
    // even a data directory every user may search: the view, not the permissions, keeps A out
    chmodSync(dir, 0o755);
    const shared = join(dir, 'shared');
    mkdirSync(shared);
    writeFileSync(join(shared, 'doc.txt'), 'shared-doc\n');
    const policy = { mode: 'workspace-write', root: b, readableRoots: [shared, join(dir, 'missing')] } as const;
    const { code, output } = await runIn(
      policy,
      [
        'cat own.txt',
        `cat ${shared}/doc.txt`,
        `{ echo x > ${shared}/w; } 2>/dev/null || echo shared-read-only`,
        `cat ${a}/secret.txt 2>/dev/null || echo no-a`,
        `cat ${dir}/sessions.db-wal 2>/dev/null || echo no-db`,
        '{ touch /planted; } 2>/dev/null || echo root-read-only',
        'ls /',
      ].join('; '),
    );
    expect(code).toBe(0);
    const lines = output.trim().split('\n');
    expect(lines.slice(0, 6)).toEqual(['b-own', 'shared-doc', 'shared-read-only', 'no-a', 'no-db', 'root-read-only']);
    const top = new Set(lines.slice(6));
    // the top level: platform directories that exist here, /dev, /proc, /tmp, and the way to the roots
    const expected = new Set(['dev', 'proc', 'tmp', dir.split('/')[1]]);
    for (const root of PLATFORM_READ_ROOTS) if (root.split('/').length === 2 && existsSync(root)) expected.add(root.slice(1));
    expect(top).toEqual(expected);
  });

  test('a data directory at 0700 works in the restricted view too, and programs run (shell, coreutils, /etc)', async () => {
    const { dir, b } = dataDirectory();
    chmodSync(dir, 0o700);
    const { code, output } = await runIn({ mode: 'workspace-write', root: b, readableRoots: [] }, `cat own.txt; ls -A ${dir}; id -un 2>/dev/null || id -u; head -c 4 /etc/passwd; echo; sort -r own.txt | wc -l`);
    expect(output).not.toContain('bwrap');
    expect(output.split('\n').slice(0, 2)).toEqual(['b-own', 'tenants']);
    expect(output).toContain('root');
    expect(code).toBe(0);
  });

  test.runIf(asRoot)('a listed root closed to other users (0700, owned by root) is readable as listed, read-only', async () => {
    const { dir, b } = dataDirectory();
    const closed = join(dir, 'closed');
    mkdirSync(closed, { mode: 0o700 });
    writeFileSync(join(closed, 'key.txt'), 'listed\n', { mode: 0o600 });
    const listed = await runIn({ mode: 'workspace-write', root: b, readableRoots: [closed] }, `cat ${closed}/key.txt; { echo y > ${closed}/key.txt; } 2>/dev/null || echo read-only`);
    expect(listed).toEqual({ code: 0, output: 'listed\nread-only\n' });
    const unlisted = await runIn({ mode: 'workspace-write', root: b, readableRoots: [] }, `cat ${closed}/key.txt 2>/dev/null || echo hidden`);
    expect(unlisted).toEqual({ code: 0, output: 'hidden\n' });
  });
});
