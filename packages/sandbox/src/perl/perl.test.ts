import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findExecutable } from '../find-executable';
import { launcherSyscalls } from '../launchers';
import { perlProgram, PROGRAMS_MODULE } from './build-perl';
import { REAPER, SECCOMP_EXEC } from './programs.generated';

const perl = findExecutable('perl');
const folder = new URL('.', import.meta.url);

describe('the bundled perl programs', () => {
  it('are the bundle of the current .pl files (run `build:perl` after editing src/perl)', () => {
    expect(readFileSync(PROGRAMS_MODULE.file, 'utf8')).toBe(PROGRAMS_MODULE.fresh());
  });

  it('expand their parts and drop comments and blank lines', () => {
    expect(REAPER).toContain('sub close_from {');
    expect(REAPER).toContain('sub run_reaped {');
    expect(REAPER).not.toMatch(/^\s*#/m);
    expect(REAPER).not.toMatch(/\n\n/);
    // each part exists once in the sources: no program text repeated across .pl files
    const sources = readdirSync(folder).filter((file) => file.endsWith('.pl'));
    expect(sources.filter((file) => readFileSync(new URL(file, folder), 'utf8').includes('sub close_from {'))).toEqual(['close-from.pl']);
  });

  it('name kernel numbers and flags: no bare number is passed to syscall, fcntl or waitpid', () => {
    for (const file of readdirSync(folder).filter((name) => name.endsWith('.pl') && name !== 'constants.pl')) {
      const text = readFileSync(new URL(file, folder), 'utf8');
      expect({ file, bare: text.match(/\b(syscall|fcntl|waitpid)\((?:[^,]+, )?(-?0x[0-9a-f]+|-?\d{2,})\b/g) }).toEqual({ file, bare: null });
      expect({ file, bare: text.match(/\bsyscall\(\d+,/g) }).toEqual({ file, bare: null });
    }
  });

  it('fails on a missing part', () => {
    expect(() => perlProgram('no-such-part.pl')).toThrow(/ENOENT/);
  });
});

describe.runIf(perl !== undefined && launcherSyscalls() !== undefined)('a running launcher', () => {
  it('shows its short name, not its program text, to ps (/proc/<pid>/cmdline and comm)', async () => {
    const child = spawn(perl as string, ['-e', REAPER, String(launcherSyscalls()?.prctl), '--', '/bin/sh', '-c', 'read line'], { stdio: ['pipe', 'ignore', 'ignore'] });
    try {
      const pid = child.pid as number;
      // the reaper renames itself before it forks the command: wait for its child
      const deadline = Date.now() + 10_000;
      while (!readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '')).toBe('sy-reaper');
      expect(readFileSync(`/proc/${pid}/comm`, 'utf8')).toBe('sy-reaper\n');
    } finally {
      child.stdin?.end();
      await new Promise((resolve) => child.once('close', resolve));
    }
  });

  it('every program names itself first thing', () => {
    expect(SECCOMP_EXEC).toMatch(/^(sub \w+ \(\) \{ -?\w+ \}\n)+\$0 = 'sy-seccomp-exec';\n/);
  });
});
