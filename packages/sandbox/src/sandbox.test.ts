import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { checkSandbox } from './availability';
import { sandboxCommand } from './sandbox-command';
import { processesWith, processInfo } from '@switchyard/config/proc';
import { makeWorkspace, runIn, uniqueSleepSeconds } from './test-support';
import { killProcessTree } from './kill-tree';
import { becomes } from '@switchyard/test-helpers';

// These tests need bubblewrap (installed by `npm test` / scripts/setup.mjs on CI). They fail, not
// skip, without it: the sandbox is the promise of this package.
const asRoot = process.geteuid?.() === 0;
const hostUid = process.geteuid?.() ?? 0;
const expectedUid = asRoot ? 65534 : hostUid;

describe('who a sandboxed command is', () => {
  test(`runs as ${asRoot ? 'uid 65534 (the host is root)' : 'the invoking user'}, with no capabilities, no_new_privs and seccomp`, async () => {
    const root = makeWorkspace();
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const { code, output } = await runIn({ mode, root }, 'id -u; grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status');
      expect(code).toBe(0);
      expect(output).toBe(
        `${expectedUid}\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n`,
      );
    }
  });

  test('the host side of the user namespace maps only the sandbox user (seen from /proc on the host)', async () => {
    const root = makeWorkspace();
    const marker = uniqueSleepSeconds();
    const command = sandboxCommand(['/bin/sh', '-c', `exec sleep ${marker}`], { mode: 'workspace-write', root }, { cwd: root });
    const child = spawn(command.file, command.args, { cwd: root, stdio: 'ignore', detached: true });
    try {
      expect(await becomes(() => processesWith(marker).some((pid) => processInfo(pid)?.cmdline[0] === 'sleep'), 5_000)).toBe(true);
      const pid = processesWith(marker).find((candidate) => processInfo(candidate)?.cmdline[0] === 'sleep') as number;
      expect(readFileSync(`/proc/${pid}/uid_map`, 'utf8').trim().split(/\s+/)).toEqual([String(expectedUid), String(expectedUid), '1']);
      expect(readFileSync(`/proc/${pid}/status`, 'utf8')).toMatch(new RegExp(`\\nUid:\\t${expectedUid}\\t${expectedUid}\\t${expectedUid}\\t${expectedUid}\\n`));
    } finally {
      killProcessTree(child.pid as number);
    }
    expect(await becomes(() => processesWith(marker).length === 0, 5_000)).toBe(true);
    // its cgroups as root (a later test counts this process's groups left)
    command.release();
  });
});

describe('the workspace', () => {
  test('workspace-write: files written land on disk owned by the host user; the sandbox sees them as its own', async () => {
    const root = makeWorkspace();
    writeFileSync(join(root, 'existing.txt'), 'old\n');
    const { code, output } = await runIn({ mode: 'workspace-write', root }, 'echo new >> existing.txt && mkdir -p d && echo x > d/f && stat -c %u existing.txt d/f');
    expect({ code, output }).toEqual({ code: 0, output: `${expectedUid}\n${expectedUid}\n` });
    expect(readFileSync(join(root, 'existing.txt'), 'utf8')).toBe('old\nnew\n');
    expect(statSync(join(root, 'd', 'f')).uid).toBe(hostUid);
    expect(statSync(join(root, 'existing.txt')).uid).toBe(hostUid);
  });

  test('read-only: the workspace is readable (even mode 0700) and nothing can be written', async () => {
    const root = makeWorkspace(); // mkdtemp: mode 0700
    writeFileSync(join(root, 'a.txt'), 'alpha\n');
    const { code, output } = await runIn({ mode: 'read-only', root }, 'cat a.txt; echo x > b.txt');
    expect(code).not.toBe(0);
    expect(output).toMatch(/^alpha\n.*b\.txt: Read-only file system\n$/s);
    expect(existsSync(join(root, 'b.txt'))).toBe(false);
  });

  test('.git: a read-only placeholder when absent (removed afterwards), existing root and nested .git read-only, the rest writable', async () => {
    const root = makeWorkspace();
    mkdirSync(join(root, 'sub', '.git'), { recursive: true });
    writeFileSync(join(root, 'sub', '.git', 'config'), '[core]\n');
    mkdirSync(join(root, 'a', 'b', '.git'), { recursive: true });
    writeFileSync(join(root, 'a', 'b', '.git', 'config'), '[core]\n');
    const attempts = [
      'mkdir -p .git/hooks',
      'echo x > .git/config',
      'rmdir .git',
      'mv .git moved',
      'echo "[core] fsmonitor = touch /tmp/pwned" >> sub/.git/config',
      'rm -rf sub/.git',
      // renaming a parent of a nested repository away, to put a fresh one in its place
      'mv sub moved && mkdir -p sub/.git && echo "[core] fsmonitor = x" > sub/.git/config',
      'mv a moved && mkdir -p a/b/.git && echo "[core] fsmonitor = x" > a/b/.git/config',
      'mv a/b a/moved',
    ];
    for (const attempt of attempts) {
      const { code } = await runIn({ mode: 'workspace-write', root }, attempt);
      expect(code, attempt).not.toBe(0);
    }
    // The placeholder is gone once the last command ended (spawnSandboxed releases it on exit).
    expect(existsSync(join(root, '.git'))).toBe(false);
    expect(existsSync(join(root, '.git', 'hooks'))).toBe(false);
    expect(existsSync(join(root, '.git', 'config'))).toBe(false);
    expect(readFileSync(join(root, 'sub', '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(readFileSync(join(root, 'a', 'b', '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(existsSync(join(root, 'moved'))).toBe(false);
    expect(await runIn({ mode: 'workspace-write', root }, 'echo ok > sub/file && cat sub/file && echo ok > a/b/file && rm a/b/file')).toEqual({ code: 0, output: 'ok\n' });
  });

  test('host-private files and other homes are not readable; /proc/sys is read-only', async () => {
    const root = makeWorkspace();
    const { output } = await runIn(
      { mode: 'workspace-write', root },
      'cat /etc/shadow >/dev/null 2>&1 && echo shadow-readable; ls -A /root | wc -l; ls -A /home | wc -l; (exec 3>>/proc/sys/kernel/core_pattern) 2>/dev/null && echo core_pattern-writable; (exec 3>>/proc/sysrq-trigger) 2>/dev/null && echo sysrq-writable; grep -E " /proc/sys " /proc/self/mountinfo | grep -c " ro[, ]"',
    );
    expect(output).toBe('0\n0\n1\n');
  });
});

describe('what the command needs to start', () => {
  test('readOnlyPaths shows a file and a folder the sandbox hides (private /tmp, a 0700 parent), read-only', async () => {
    const root = makeWorkspace();
    // A private folder under /tmp: hidden twice (private /tmp inside, and mode 0700 for the sandbox user).
    const hidden = makeWorkspace('sandbox-hidden-');
    mkdirSync(join(hidden, 'lib'));
    writeFileSync(join(hidden, 'lib', 'module.txt'), 'module\n', { mode: 0o644 });
    writeFileSync(join(hidden, 'tool.sh'), 'echo tool ran\n');
    // World-writable: only the read-only mount stops the sandbox user.
    chmodSync(join(hidden, 'tool.sh'), 0o777);
    chmodSync(join(hidden, 'lib'), 0o777);
    // One stream (stderr into stdout), so the order of lines is the order of the commands.
    const script = `exec 2>&1; sh ${hidden}/tool.sh; cat ${hidden}/lib/module.txt; echo x > ${hidden}/lib/new.txt; echo x >> ${hidden}/tool.sh; ls ${hidden}`;
    const shown = await runIn({ mode: 'workspace-write', root }, script, { readOnlyPaths: [join(hidden, 'tool.sh'), join(hidden, 'lib')] });
    expect(shown.output).toMatch(new RegExp(`^tool ran\nmodule\n.*new\\.txt: Read-only file system\n.*tool\\.sh: Read-only file system\nlib\ntool\\.sh\n$`, 's'));
    expect(readFileSync(join(hidden, 'tool.sh'), 'utf8')).toBe('echo tool ran\n');
    expect(existsSync(join(hidden, 'lib', 'new.txt'))).toBe(false);
    // Without them the same paths do not exist inside.
    const plain = await runIn({ mode: 'workspace-write', root }, `cat ${hidden}/lib/module.txt || echo missing`);
    expect(plain.output).toMatch(/No such file or directory\nmissing\n$/);
    // The workspace stays writable when it lies inside a readable folder (one the sandbox user
    // may enter: the files' own permissions still apply inside).
    chmodSync(hidden, 0o755);
    const inner = join(hidden, 'lib');
    expect(await runIn({ mode: 'workspace-write', root: inner }, 'echo w > w.txt && cat w.txt', { readOnlyPaths: [hidden] })).toEqual({ code: 0, output: 'w\n' });
    expect(() => sandboxCommand(['x'], { mode: 'workspace-write', root }, { cwd: root, readOnlyPaths: [join(hidden, 'missing')] })).toThrow(`sandboxCommand: readOnlyPaths entry ${join(hidden, 'missing')} does not exist`);
  });

  test('a readable folder that is itself closed to other users (a checkout in a 0700 temporary folder) can be entered, still read-only', async () => {
    const root = makeWorkspace();
    const closed = makeWorkspace('sandbox-closed-');
    mkdirSync(join(closed, 'lib'));
    writeFileSync(join(closed, 'lib', 'module.txt'), 'module\n', { mode: 0o644 });
    chmodSync(closed, 0o700);
    const script = `exec 2>&1; cat ${closed}/lib/module.txt; echo x > ${closed}/new.txt; ls ${closed}`;
    const shown = await runIn({ mode: 'workspace-write', root }, script, { readOnlyPaths: [closed] });
    expect(shown.output).toMatch(new RegExp(`^module\n.*new\\.txt: Read-only file system\nlib\n$`, 's'));
    expect(existsSync(join(closed, 'new.txt'))).toBe(false);
    expect(statSync(closed).mode & 0o777).toBe(0o700);
  });
});

describe('environment and refusals', () => {
  test('planted secrets never reach a sandboxed env', async () => {
    const root = makeWorkspace();
    const planted = { APP_DATABASE_URL: 'postgres://u:planted-1@h/db', GH_PAT: 'ghp_planted-2', MYSQL_PWD: 'planted-3', AWS_CREDENTIALS: 'planted-4', PLAIN_LOOKING: 'planted-5' };
    Object.assign(process.env, planted);
    let result;
    try {
      result = await runIn({ mode: 'workspace-write', root }, 'env');
    } finally {
      for (const name of Object.keys(planted)) delete process.env[name];
    }
    const { code, output } = result;
    expect(code).toBe(0);
    for (const [name, value] of Object.entries(planted)) {
      expect(output).not.toContain(name);
      expect(output).not.toContain(value);
    }
    expect(output).toContain(`PATH=${process.env.PATH}`);
  });

  test('without bubblewrap a sandboxed mode refuses with the missing piece named; nothing runs', async () => {
    const root = makeWorkspace();
    const check = await checkSandbox({ mode: 'workspace-write', root, bwrapPath: '/nonexistent/bwrap' });
    expect(check.available).toBe(false);
    if (check.available) return;
    expect(check.missing).toBe('bubblewrap');
    expect(check.error.message).toBe(
      'sandbox unavailable: bubblewrap (/nonexistent/bwrap) was not found; refusing to run the command without the workspace-write sandbox (install bubblewrap, or configure the sandbox as danger-full-access)',
    );
    await expect(runIn({ mode: 'read-only', root, bwrapPath: '/nonexistent/bwrap' }, `touch ${root}/ran`)).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    expect(existsSync(join(root, 'ran'))).toBe(false);
    expect(await checkSandbox({ mode: 'danger-full-access', root, bwrapPath: '/nonexistent/bwrap' })).toEqual({ available: true });
  });

  test('a bubblewrap that cannot create a sandbox is reported, not bypassed', async () => {
    const root = makeWorkspace();
    chmodSync(root, 0o755); // the sandbox user (as root: 65534) must be able to run it
    const fake = join(root, 'bwrap');
    writeFileSync(fake, '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n', { mode: 0o755 });
    const check = await checkSandbox({ mode: 'workspace-write', root, bwrapPath: fake });
    expect(check).toMatchObject({ available: false, missing: 'user-namespaces' });
    if (!check.available) expect(check.error.message).toContain('bubblewrap cannot create an unprivileged user namespace (bwrap: setting up uid map: Permission denied)');
  });
});

describe('process hygiene', () => {
  test('danger-full-access: setsid and double-forked children die when the command ends', async () => {
    const root = makeWorkspace();
    const marker = uniqueSleepSeconds();
    const { code } = await runIn({ mode: 'danger-full-access', root }, `setsid sleep ${marker} & (sleep ${marker} &) ; nohup sleep ${marker} >/dev/null 2>&1 & sleep 0.2; echo done`);
    expect(code).toBe(0);
    expect(await becomes(() => processesWith(marker).length === 0, 5_000)).toBe(true);
  });

  const asRoot = process.getuid?.() === 0;
  for (const cgroups of [true, false]) {
    test.runIf(asRoot)(`danger-full-access as root, cgroups ${cgroups ? 'on' : 'off'}: a child that kills the reaper and leaves ${cgroups ? 'dies with the command (its tracking cgroup)' : 'survives (the control)'}`, async () => {
      const root = makeWorkspace();
      const marker = uniqueSleepSeconds();
      const { code } = await runIn({ mode: 'danger-full-access', root, limits: { cgroups } }, `setsid sleep ${marker} </dev/null >/dev/null 2>&1 & sleep 0.2; kill -9 $PPID`);
      expect(code).toBe(137);
      try {
        expect(await becomes(() => processesWith(marker).length === 0, 3_000)).toBe(cgroups);
      } finally {
        processesWith(marker).forEach((pid) => process.kill(pid, 'SIGKILL'));
      }
      // the group goes once its last process is reaped: a daemon killed there is a zombie of pid 1 until init reaps it
      const groupsLeft = () => readdirSync('/sys/fs/cgroup/pids').filter((name) => name.startsWith(`switchyard-${process.pid}-`));
      await becomes(() => groupsLeft().length === 0, 20_000);
      expect(groupsLeft()).toEqual([]);
    }, 60_000);
  }

  test('sandboxed: setsid and double-forked children die with the PID namespace', async () => {
    const root = makeWorkspace();
    const marker = uniqueSleepSeconds();
    const { code } = await runIn({ mode: 'workspace-write', root }, `setsid sleep ${marker} & (sleep ${marker} &); sleep 0.2; echo done`);
    expect(code).toBe(0);
    expect(await becomes(() => processesWith(marker).length === 0, 5_000)).toBe(true);
  });

  for (const mode of ['workspace-write', 'danger-full-access'] as const) {
    test(`${mode}: a host killed with SIGKILL takes the command and its setsid children along (PR_SET_PDEATHSIG)`, async () => {
      const root = makeWorkspace();
      const marker = uniqueSleepSeconds();
      const command = sandboxCommand(['/bin/sh', '-c', `setsid sleep ${marker} & sleep ${marker}`], { mode, root }, { cwd: root });
      // A stand-in host: a Node process that starts the command, then is SIGKILLed (no exit hooks run).
      const host = spawn(
        process.execPath,
        ['-e', `const c = require('child_process').spawn(process.argv[1], JSON.parse(process.argv[2]), { stdio: 'ignore', detached: true }); setInterval(() => {}, 1000);`, command.file, JSON.stringify(command.args)],
        { cwd: root, stdio: 'ignore' },
      );
      try {
        expect(await becomes(() => processesWith(marker).filter((pid) => processInfo(pid)?.cmdline[0] === 'sleep').length === 2, 10_000)).toBe(true);
      } finally {
        host.kill('SIGKILL');
      }
      expect(await becomes(() => processesWith(marker).length === 0, 10_000)).toBe(true);
    });
  }
});
