import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SYNC_RULE_PACKAGES, findUnjustifiedSyncCalls } from '../src/sync-calls';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('the synchronous-call rule', () => {
  it('holds in this repository: every *Sync call of sandbox, tool-exec and tool-apply-patch says why it may block', () => {
    expect(SYNC_RULE_PACKAGES).toEqual(['sandbox', 'tool-exec', 'tool-apply-patch']);
    expect(findUnjustifiedSyncCalls(repo)).toEqual([]);
  });

  describe('on a package that breaks it', () => {
    const root = mkdtempSync(join(tmpdir(), 'switchyard-sync-calls-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    const file = (name: string, text: string) => {
      const path = join(root, 'packages', 'sandbox', 'src', name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
    };
    file(
      'calls.ts',
      [
        "import * as fs from 'node:fs';",
        "import { statSync, realpathSync } from 'node:fs';",
        "import { spawnSync } from 'node:child_process';",
        'export function plain(path: string) {',
        '  return statSync(path).isDirectory();',
        '}',
        '/** Synchronous: one `stat` of one path per command, no directory listed. */',
        'export function documented(path: string) {',
        '  return statSync(path).isDirectory();',
        '}',
        'export function inline(path: string) {',
        '  // Synchronous on purpose: once per process, before the first command.',
        '  const real = realpathSync.native(path);',
        '  return fs.openSync(real, 0);',
        '}',
        '// synchronous',
        'export const bare = () => spawnSync("true");',
        'export const held = {',
        '  /** Synchronous: the exit handler, which cannot wait, calls it once. */',
        '  close: (fd: number) => fs.closeSync(fd),',
        '  read: (fd: number) => fs.readSync(fd, Buffer.alloc(1)),',
        '};',
        '',
      ].join('\n'),
    );
    file('noted.ts', "import { statSync } from 'node:fs';\n\n// Synchronous on purpose, every call in this file: they read /proc, served from memory.\n\nexport const a = () => statSync('/proc/self');\n");
    file('calls.test.ts', "import { statSync } from 'node:fs';\nstatSync('/');\n");
    file('test-support.ts', "import { statSync } from 'node:fs';\nexport const t = () => statSync('/');\n");

    it('names each call without a reason: the bare one, the one past the commented statement, a marker without a reason', () => {
      expect(findUnjustifiedSyncCalls(root, ['sandbox'])).toEqual([
        "packages/sandbox/src/calls.ts:5: statSync(…) blocks the host's thread — say why it may, in a comment naming it synchronous above the call or its function, or make it asynchronous",
        "packages/sandbox/src/calls.ts:14: openSync(…) blocks the host's thread — say why it may, in a comment naming it synchronous above the call or its function, or make it asynchronous",
        "packages/sandbox/src/calls.ts:17: spawnSync(…) blocks the host's thread — say why it may, in a comment naming it synchronous above the call or its function, or make it asynchronous",
        "packages/sandbox/src/calls.ts:21: readSync(…) blocks the host's thread — say why it may, in a comment naming it synchronous above the call or its function, or make it asynchronous",
      ]);
    });
  });
});
