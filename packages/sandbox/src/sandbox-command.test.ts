import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { isLikelySandboxDenial } from './denial';
import { findExecutable } from './find-executable';
import { REAPER, ROOT_LAUNCHER } from './launchers';
import { sandboxCommand } from './sandbox-command';
import { buildSeccompFilter } from './seccomp';
import { makeWorkspace } from './test-support';

const asRoot = process.geteuid?.() === 0;

describe('sandboxCommand', () => {
  test('danger-full-access runs the command under the reaper (or as is, when asked)', () => {
    // no tracking cgroup (as root it would wrap the command: see the next test)
    const policy = { mode: 'danger-full-access', root: '/w', limits: { cgroups: false } } as const;
    const { file, args, sandboxed } = sandboxCommand(['/bin/sh', '-c', 'true'], policy, { cwd: '/w' });
    expect({ file, sandboxed }).toEqual({ file: findExecutable('perl'), sandboxed: false });
    expect(args).toEqual(['-e', REAPER, process.arch === 'arm64' ? '167' : '157', '--', '/bin/sh', '-c', 'true']);
    expect(sandboxCommand(['/bin/sh', '-c', 'true'], policy, { cwd: '/w', reaper: false })).toMatchObject({ file: '/bin/sh', args: ['-c', 'true'] });
  });

  test.runIf(asRoot)('danger-full-access as root: the reaper runs the command through /bin/sh joining its tracking cgroup', () => {
    const command = sandboxCommand(['/bin/sh', '-c', 'true'], { mode: 'danger-full-access', root: '/w' }, { cwd: '/w' });
    try {
      expect(command.args.slice(0, 6)).toEqual(['-e', REAPER, process.arch === 'arm64' ? '167' : '157', '--', '/bin/sh', '-c']);
      expect(command.args[7]).toMatch(/^\/sys\/fs\/cgroup\/.*switchyard-\d+-\d+\/cgroup\.procs$/);
      expect(command.args.slice(8)).toEqual(['/bin/sh', '-c', 'true']);
    } finally {
      command.release();
    }
  });

  test('sandboxed modes: unprivileged user namespace, read-only root, private /tmp, new namespaces, no network, dies with parent', () => {
    const root = makeWorkspace();
    const { args, limits } = sandboxCommand(['/bin/sh', '-c', 'true'], { mode: 'workspace-write', root }, { cwd: root });
    limits?.release();
    const joined = args.join(' ');
    const bound = asRoot ? `--bind ${join(args[2], '..', 'stage', '0')} ${root}` : `--bind ${root} ${root}`;
    for (const part of ['--unshare-user --disable-userns --die-with-parent --new-session --unshare-pid --unshare-ipc --unshare-uts', '--unshare-net', '--ro-bind / / --dev /dev --size 536870912 --tmpfs /dev/shm --proc /proc --ro-bind /proc/sys /proc/sys', '--size 536870912 --tmpfs /tmp', '--size 16777216 --tmpfs /root', bound, `--chdir ${root} -- /bin/sh -c true`]) {
      expect(joined).toContain(part);
    }
    const networked = sandboxCommand(['x'], { mode: 'read-only', root, network: true }, { cwd: root, tty: true }).args;
    expect(networked).not.toContain('--unshare-net');
    expect(networked).not.toContain('--new-session');
    expect(networked).not.toContain('--bind');
    expect(networked).toContain('--ro-bind');
  });

  test('bwrap is started through /bin/sh with the seccomp filter on fd 3 (and, as root, through the root launcher)', () => {
    const root = makeWorkspace();
    mkdirSync(join(root, '.git'));
    const { file, args, protected: guarded } = sandboxCommand(['/bin/sh', '-c', 'true'], { mode: 'workspace-write', root }, { cwd: root });
    expect(file).toBe('/bin/sh');
    expect(args.slice(0, 2)).toEqual(['-c', 'exec "$@" 3<"$0"']);
    expect(readFileSync(args[2])).toEqual(buildSeccompFilter());
    if (asRoot) {
      expect(args.slice(3, 6)).toEqual([findExecutable('perl'), '-e', ROOT_LAUNCHER]);
      expect(args.slice(12, 18)).toEqual(['65534', '65534', join(args[2], '..', 'stage'), '1', root, '0']);
    } else {
      expect(args[3]).toBe(findExecutable('bwrap'));
    }
    expect(guarded.map((entry) => entry.path)).toEqual([join(root, '.git')]);
    const joined = args.join(' ');
    expect(joined).toContain(asRoot ? `--ro-bind ${join(args[2], '..', 'stage', '0', '.git')} ${root}/.git` : `--ro-bind ${root}/.git ${root}/.git`);
    expect(joined).toContain('--seccomp 3 --chdir');
    expect(joined).toContain('--tmpfs /run');
    expect(sandboxCommand(['x'], { mode: 'workspace-write', root, network: true }, { cwd: root }).args).not.toContain('/run');
  });

  test('caps per command: a cgroup of its own as root where writable (the launcher joins it), else prlimit before bwrap', () => {
    const root = makeWorkspace();
    const { args, limits } = sandboxCommand(['/bin/sh', '-c', 'true'], { mode: 'workspace-write', root, limits: { pids: 77, tmpBytes: 1024 ** 2 } }, { cwd: root });
    try {
      expect(limits).toMatchObject({ pids: 77, memoryBytes: 2 * 1024 ** 3, tmpBytes: 1024 ** 2 });
      expect(args.join(' ')).toContain('--size 1048576 --tmpfs /tmp');
      if (asRoot && limits?.mechanism.startsWith('cgroup')) {
        const procs = limits.procsFiles;
        expect(procs.length).toBeGreaterThan(0);
        const at = args.indexOf(String(procs.length), args.indexOf(ROOT_LAUNCHER));
        expect(args.slice(at + 1, at + 1 + procs.length + 1)).toEqual([...procs, '--']);
        const pidsMax = procs.map((file) => join(file, '..', 'pids.max')).find((file) => existsSync(file));
        expect(readFileSync(pidsMax as string, 'utf8').trim()).toBe('77');
      } else {
        expect(limits?.mechanism).toBe('rlimit');
        expect(args).toContain('--nproc=77');
      }
    } finally {
      limits?.release();
    }
    expect(sandboxCommand(['x'], { mode: 'workspace-write', root, limits: { cgroups: false, pids: 9 } }, { cwd: root }).limits?.prefix.slice(1)).toEqual(['--nproc=9', `--as=${2 * 1024 ** 3}`, '--']);
  });

  test('refusals name what is missing', () => {
    const root = makeWorkspace();
    expect(() => sandboxCommand(['x'], { mode: 'read-only', root, bwrapPath: 'no-such-bwrap' }, { cwd: root })).toThrow(
      expect.objectContaining({ code: 'SANDBOX_UNAVAILABLE', missing: 'bubblewrap' }),
    );
    expect(() => sandboxCommand(['x'], { mode: 'workspace-write', root: join(root, 'missing') }, { cwd: root })).toThrow(
      expect.objectContaining({ code: 'SANDBOX_UNAVAILABLE', missing: 'workspace' }),
    );
  });

  test('isLikelySandboxDenial needs a failure and a telltale message', () => {
    expect(isLikelySandboxDenial(1, "touch: cannot touch '/x': Read-only file system")).toBe(true);
    expect(isLikelySandboxDenial(0, 'Read-only file system')).toBe(false);
    expect(isLikelySandboxDenial(1, 'no such file')).toBe(false);
  });
});
