import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { findExecutable } from './find-executable';
import { CLOSE_FROM, SECCOMP_EXEC } from './descriptors';

const perl = findExecutable('perl');
const scratch = mkdtempSync(join(tmpdir(), 'sandbox-descriptors-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Runs `argv` with the file `path` open as descriptors 20 and 24 (what stdio index N is, the child
 * holds as fd N, inheritable; above 15, which a Node child marks close-on-exec at its start).
 */
function withInherited(argv: string[], path: string): string {
  const fd = openSync(path, 'r');
  try {
    const stdio = ['ignore', 'pipe', 'pipe', ...Array<'ignore'>(17).fill('ignore'), fd, ...Array<'ignore'>(3).fill('ignore'), fd];
    const result = spawnSync(argv[0], argv.slice(1), { stdio: stdio as never, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    return result.stdout;
  } finally {
    closeSync(fd);
  }
}

/** The shell's descriptors, listed by a child (a glob would list its own directory descriptor), then what fd 3 is. */
const LIST = 'ls /proc/$$/fd; echo; readlink /proc/$$/fd/3 || true';
/** The numbers of a listing, without what this test's own runner may have inherited (above 100). */
const numbers = (output: string) => output.split('\n\n')[0].split('\n').map(Number).filter((fd) => fd < 100).sort((a, b) => a - b);

describe.runIf(perl !== undefined && process.platform === 'linux')('inherited descriptors', () => {
  const filter = join(scratch, 'filter.bpf');
  writeFileSync(filter, 'not really a filter');

  test('control: a child started without a closer holds them', () => {
    expect(numbers(withInherited(['/bin/sh', '-c', LIST], filter))).toEqual([0, 1, 2, 20, 24]);
  });

  test('SECCOMP_EXEC closes every descriptor above 2, then opens the filter as fd 3 for bubblewrap', () => {
    const output = withInherited([perl as string, '-e', SECCOMP_EXEC, filter, '/bin/sh', '-c', LIST], filter);
    expect(numbers(output)).toEqual([0, 1, 2, 3]);
    expect(output.split('\n\n')[1]).toBe(`${filter}\n`);
  });

  test('close_from keeps the one descriptor it is told to', () => {
    const program = `${CLOSE_FROM}close_from(3, 24); exec '/bin/sh', '-c', $ARGV[0];`;
    expect(numbers(withInherited([perl as string, '-e', program, LIST], filter))).toEqual([0, 1, 2, 24]);
  });

  test('inheritableDescriptors lists what a child would inherit, not what Node marks close-on-exec', () => {
    const child = withInherited([process.execPath, '--conditions=@switchyard/source', '--import', 'tsx', '-e', "import('./packages/sandbox/src/descriptors.ts').then((m) => console.log(m.inheritableDescriptors().join(' ')))"], filter);
    expect(child.trim().split(' ').map(Number).filter((fd) => fd < 100)).toEqual([20, 24]);
  });
});
