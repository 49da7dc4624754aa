import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { findExecutable } from './find-executable';
import { SECCOMP_EXEC } from './descriptors';
import { REAPER, ROOT_LAUNCHER, SANDBOX_SPAWNER, SPARE_STUB, SPAWNER, launcherSyscalls } from './launchers';

const perl = findExecutable('perl');

describe.runIf(perl !== undefined)('the perl launchers', () => {
  // The programs leave out `use strict; use warnings;` (a few ms of every command's start): strictness is checked here.
  test.each([
    ['ROOT_LAUNCHER', ROOT_LAUNCHER],
    ['REAPER', REAPER],
    ['SPAWNER', SPAWNER],
    ['SANDBOX_SPAWNER', SANDBOX_SPAWNER],
    ['SPARE_STUB', SPARE_STUB],
    ['SECCOMP_EXEC', SECCOMP_EXEC],
  ])('%s compiles under strict and warnings without a single warning', (_name, program) => {
    const result = spawnSync(perl as string, ['-Mstrict', '-Mwarnings', '-c', '-e', program], { encoding: 'utf8' });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '-e syntax OK\n' });
  });

  test('a strict violation would be caught by that check', () => {
    const result = spawnSync(perl as string, ['-Mstrict', '-Mwarnings', '-c', '-e', `${REAPER}\n$undeclared = 1;`], { encoding: 'utf8' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/Global symbol "\$undeclared" requires explicit package name/);
  });

  test('the system call numbers are known per architecture and refused elsewhere', () => {
    expect(launcherSyscalls('x64')).toEqual({ unshare: 272, mount: 165, setgroups: 116, setresgid: 119, setresuid: 117, prctl: 157 });
    expect(launcherSyscalls('arm64')).toEqual({ unshare: 97, mount: 40, setgroups: 159, setresgid: 149, setresuid: 147, prctl: 167 });
    expect(launcherSyscalls('s390x')).toBeUndefined();
  });
});
