/**
 * The exec_command sandbox escape corpus: each attempt is what an attacker's command would try,
 * run through the real `exec_command` (real bubblewrap), and each check asserts a concrete absence
 * on the host: no file outside the workspace, an unchanged file or git config, no surviving pid, a
 * host process untouched. Attempts never write to a real host interface: kernel files are only
 * opened (`exec 3>>file` writes nothing), and every target outside is a marker path of this run.
 *
 * Runs as whoever starts it (the test starts it as root and as uid 65534) and prints a JSON report.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isSwitchyardError, type JsonObject, type SandboxMode, type ToolOutput } from '@switchyard/protocol';
import { invokeTool } from '@switchyard/registry/testing';
import { execTools } from '@switchyard/tool-exec';
import { processesWith } from '@switchyard/config/proc';
import { becomes } from '@switchyard/test-helpers/poll';
import { codeModeValue } from '@switchyard/test-helpers';

/** What every attempt can use. Paths under `outside` are this run's markers. */
export interface Context {
  /** The workspace of this attempt (fresh). */
  root: string;
  /** A world-writable directory outside the workspace and outside /tmp: only the sandbox can stop a write there. */
  outside: string;
  /** A file in `outside` the host holds open read-write (fd `hostFd`), world-writable. */
  hostFile: string;
  hostFd: number;
  hostPid: number;
  /** An unsandboxed `sleep <marker>` the host started: signals must not reach it. */
  victimPid: number;
  /** A Unix socket server of the host in `outside`; `unixConnections()` counts what reached it. */
  socketPath: string;
  unixConnections: () => number;
  /** A unique number, usable as `sleep` argument. */
  marker: string;
}

export interface Attempt {
  name: string;
  /** Default `workspace-write`. */
  mode?: SandboxMode;
  network?: boolean;
  setup?(context: Context): void;
  cmd(context: Context): string;
  /** Returns what escaped (a description), or undefined when the attempt left nothing. */
  check(context: Context, result: { output: string; exitCode?: number }): string | undefined | Promise<string | undefined>;
}

export interface AttemptResult {
  name: string;
  mode: SandboxMode;
  /** `held`, `escaped` (with what), or `error` (the harness could not run it: counts as a failure). */
  verdict: 'held' | 'escaped' | 'error';
  detail?: string;
  exitCode?: number;
}

export interface CorpusReport {
  uid: number;
  attempts: number;
  held: number;
  results: AttemptResult[];
}

const absent = (path: string, what = path) => (existsSync(path) ? `${what} was created` : undefined);
const unchanged = (path: string, before: string) => {
  const now = existsSync(path) ? readFileSync(path, 'utf8') : '<deleted>';
  return now === before ? undefined : `${path} changed to ${JSON.stringify(now.slice(0, 80))}`;
};
const notIn = (output: string, needle: string, what: string) => (output.includes(needle) ? what : undefined);

const survivors = async (context: Context, mode: string) => {
  const left = () => processesWith(`sleep ${context.marker}`).filter((pid) => pid !== context.victimPid);
  await becomes(() => left().length === 0, 5_000, 50);
  return left().length === 0 ? undefined : `${left().length} process(es) started by the command outlived it (${mode})`;
};

const victimAlive = (context: Context) => {
  try {
    const state = readFileSync(`/proc/${context.victimPid}/stat`, 'utf8');
    const letter = state.slice(state.lastIndexOf(')') + 2, state.lastIndexOf(')') + 3);
    return letter === 'S' || letter === 'R' ? undefined : `the host's victim process is in state ${letter}`;
  } catch {
    return "the host's victim process was killed";
  }
};

/** perl one-liners: a syscall with arguments, printing `ok` or the errno name's text. */
const perlSyscall = (nr: string, args: string) => `perl -e '$r = syscall(${nr}, ${args}); print $r < 0 ? "failed: $!\\n" : "CALL SUCCEEDED $r\\n"'`;
const x64 = process.arch === 'x64';
const nr = (x: number, arm: number) => String(x64 ? x : arm);

let corePatternBefore = '';
let shadowHead = '';

export const ATTEMPTS: Attempt[] = [
  ...(['workspace-write', 'read-only'] as const).map<Attempt>((mode) => ({
    name: `bind-mount / and remount it writable (${mode})`,
    mode,
    cmd: ({ outside }) => `mkdir -p /tmp/m && mount --bind / /tmp/m && mount -o remount,bind,rw /tmp/m && echo x > /tmp/m${outside}/mounted`,
    check: ({ outside }) => absent(join(outside, 'mounted')),
  })),
  {
    name: 'unshare -rm: a user namespace of its own, then mount a tmpfs',
    cmd: ({ outside }) => `unshare -rm sh -c 'mount -t tmpfs t /tmp && echo MOUNTED; echo x > ${outside}/unshared'`,
    check: ({ outside }, { output }) => notIn(output, 'MOUNTED', 'a mount succeeded in a new namespace') ?? absent(join(outside, 'unshared')),
  },
  {
    name: 'unshare -r as root of a new user namespace',
    cmd: ({ outside }) => `unshare -r sh -c 'id -u > ${outside}/userns-root'`,
    check: ({ outside }) => absent(join(outside, 'userns-root')),
  },
  {
    name: 'nsenter into pid 1 namespaces',
    cmd: ({ outside }) => `nsenter -t 1 -a sh -c 'echo x > ${outside}/nsenter'; nsenter -t 1 -m sh -c 'echo x > ${outside}/nsenter'`,
    check: ({ outside }) => absent(join(outside, 'nsenter')),
  },
  {
    name: 'chroot to / and write',
    cmd: ({ outside }) => `chroot / sh -c 'echo x > ${outside}/chroot'`,
    check: ({ outside }) => absent(join(outside, 'chroot')),
  },
  {
    name: 'bubblewrap inside the sandbox',
    cmd: ({ outside }) => `bwrap --bind / / sh -c 'echo x > ${outside}/nested-bwrap'`,
    check: ({ outside }) => absent(join(outside, 'nested-bwrap')),
  },
  {
    name: 'setuid binaries (su, mount, newgrp, sg)',
    cmd: ({ outside }) =>
      `su root -c 'touch ${outside}/su' </dev/null; mkdir -p ${outside}/mnt; mount -t tmpfs none ${outside}/mnt && touch ${outside}/mount; newgrp root </dev/null; sg root -c 'touch ${outside}/sg' </dev/null; true`,
    check: ({ outside }) => absent(join(outside, 'su')) ?? absent(join(outside, 'mount')) ?? absent(join(outside, 'sg')),
  },
  {
    name: 'capabilities: CapEff and CapBnd are zero, no_new_privs set',
    cmd: () => 'grep -E "^(CapEff|CapBnd|CapPrm|NoNewPrivs):" /proc/self/status',
    check: (_context, { output }) =>
      output === 'CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\n' ? undefined : `capabilities present: ${JSON.stringify(output)}`,
  },
  {
    name: 'open /proc/sys/kernel/core_pattern and /proc/sysrq-trigger for writing (nothing written)',
    cmd: () => '(exec 3>>/proc/sys/kernel/core_pattern) 2>/dev/null && echo CORE_PATTERN_OPEN; (exec 3>>/proc/sysrq-trigger) 2>/dev/null && echo SYSRQ_OPEN; (exec 3>>/proc/sys/vm/drop_caches) 2>/dev/null && echo VM_OPEN',
    check: (_context, { output }) => (output.includes('_OPEN') ? `kernel files opened for writing: ${output.trim()}` : unchanged('/proc/sys/kernel/core_pattern', corePatternBefore)),
  },
  {
    name: 'open /sys files for writing (nothing written)',
    cmd: () => 'for f in /sys/kernel/mm/ksm/run /sys/kernel/profiling /sys/fs/cgroup/cgroup.procs /sys/power/state; do (exec 3>>"$f") 2>/dev/null && echo "OPEN $f"; done; true',
    check: (_context, { output }) => notIn(output, 'OPEN', `sysfs opened for writing: ${output.trim()}`),
  },
  {
    name: 'read /etc/shadow',
    cmd: () => 'cat /etc/shadow; cat /etc/gshadow',
    check: (_context, { output }) => (shadowHead && output.includes(shadowHead)) || /^root:/m.test(output) ? '/etc/shadow was read' : undefined,
  },
  {
    name: "list /root and other users' homes",
    cmd: () => 'ls -A /root | wc -l; ls -A /home | wc -l; cat /root/.bashrc /root/.profile 2>/dev/null | wc -c',
    check: (_context, { output }) => (output === '0\n0\n0\n' ? undefined : `homes visible: ${JSON.stringify(output)}`),
  },
  {
    name: 'planted secrets in the host environment',
    cmd: () => 'env',
    check: (_context, { output }) => {
      const leaked = Object.entries(PLANTED).filter(([name, value]) => output.includes(name) || output.includes(value));
      return leaked.length ? `leaked: ${leaked.map(([name]) => name).join(', ')}` : undefined;
    },
  },
  {
    name: 'overwrite the running shell through /proc/self/exe',
    cmd: () => '(exec 3>>/proc/self/exe) 2>/dev/null && echo EXE_OPEN; (exec 3>>"$(readlink -f /bin/sh)") 2>/dev/null && echo SH_OPEN; true',
    check: (_context, { output }) => notIn(output, '_OPEN', `a host binary opened for writing: ${output.trim()}`),
  },
  {
    name: 'write through /proc/1/root and /proc/self/root',
    cmd: ({ outside }) => `echo x > /proc/1/root${outside}/proc1root; echo x > /proc/self/root${outside}/procselfroot; cat /proc/1/cmdline | tr '\\0' ' '`,
    check: ({ outside }) => absent(join(outside, 'proc1root')) ?? absent(join(outside, 'procselfroot')),
  },
  {
    name: "write through /proc/<pid>/fd of a host process holding a file open",
    cmd: ({ hostPid, hostFd, hostFile }) =>
      `echo ESCAPED >> /proc/${hostPid}/fd/${hostFd}; for f in /proc/[0-9]*/fd/*; do case "$(readlink "$f")" in ${hostFile}*) echo ESCAPED >> "$f";; esac; done; true`,
    check: ({ hostFile }) => unchanged(hostFile, 'host-held\n'),
  },
  {
    name: 'symlink out of the workspace, then write through it',
    cmd: ({ outside }) => `ln -s ${outside} out && echo x > out/via-symlink; ln -s ${outside}/via-symlink2 l2 && echo x > l2`,
    check: ({ outside }) => absent(join(outside, 'via-symlink')) ?? absent(join(outside, 'via-symlink2')),
  },
  {
    name: 'a symlink the host left in the workspace pointing at a host file',
    setup: ({ root, hostFile }) => symlinkSync(hostFile, join(root, 'planted-link')),
    cmd: () => 'echo ESCAPED >> planted-link; cp /dev/null planted-link',
    check: ({ hostFile }) => unchanged(hostFile, 'host-held\n'),
  },
  {
    name: 'hard link a host file into the workspace, then write it',
    cmd: ({ hostFile }) => `ln ${hostFile} hard && echo ESCAPED >> hard; ln -f ${hostFile} hard2; cat /dev/null > hard2; true`,
    check: ({ hostFile }) => unchanged(hostFile, 'host-held\n'),
  },
  {
    name: 'plant core.fsmonitor in an existing repository, then the host runs git status',
    setup: ({ root }) => execFileSync('git', ['init', '-q', root], { stdio: 'ignore' }),
    cmd: ({ outside }) => `git config core.fsmonitor "touch ${outside}/fsmonitor-ran"; echo "[core] fsmonitor = touch ${outside}/fsmonitor-ran" >> .git/config; printf '#!/bin/sh\\ntouch ${outside}/hook-ran\\n' > .git/hooks/pre-commit`,
    check: ({ root, outside }) => {
      execFileSync('git', ['-C', root, 'status', '--short'], { stdio: 'ignore', env: { PATH: process.env.PATH, HOME: root } });
      return absent(join(outside, 'fsmonitor-ran'), 'the planted fsmonitor ran') ?? absent(join(root, '.git', 'hooks', 'pre-commit'));
    },
  },
  {
    name: 'create .git (none yet): hooks and config',
    cmd: ({ outside }) => `mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch ${outside}/hook\\n' > .git/hooks/post-checkout; git init -q . ; echo "[core] fsmonitor = touch ${outside}/fsm" > .git/config`,
    check: ({ root }) => {
      // The read-only placeholder is removed once the command ended; whatever is there must be empty.
      const entries = existsSync(join(root, '.git')) ? readdirSync(join(root, '.git')) : [];
      return entries.length === 0 ? undefined : `.git gained ${entries.join(', ')}`;
    },
  },
  {
    name: 'write sub/.git/config of a nested repository',
    setup: ({ root }) => {
      mkdirSync(join(root, 'sub', '.git'), { recursive: true });
      writeFileSync(join(root, 'sub', '.git', 'config'), '[core]\n');
    },
    cmd: ({ outside }) => `echo "[core] fsmonitor = touch ${outside}/sub-fsm" >> sub/.git/config; rm -rf sub/.git; mv sub moved && mkdir -p moved/.git`,
    check: ({ root }) => unchanged(join(root, 'sub', '.git', 'config'), '[core]\n') ?? absent(join(root, 'moved'), 'the nested repository was renamed away'),
  },
  {
    name: 'replace a worktree gitfile (.git as a file)',
    setup: ({ root }) => writeFileSync(join(root, '.git'), 'gitdir: /nonexistent/worktree\n'),
    cmd: ({ outside }) => `echo "gitdir: ${outside}" > .git; rm -f .git`,
    check: ({ root }) => unchanged(join(root, '.git'), 'gitdir: /nonexistent/worktree\n'),
  },
  {
    name: 'signals to host processes (the victim pid, pkill)',
    cmd: ({ victimPid, marker }) => `kill -9 ${victimPid}; kill -STOP ${victimPid}; pkill -9 -f "sleep ${marker}"; true`,
    check: (context) => victimAlive(context),
  },
  {
    name: 'ptrace the host victim (attach) and process_vm_readv',
    cmd: ({ victimPid }) => `${perlSyscall(nr(101, 117), `16, ${victimPid}, 0, 0`)}; ${perlSyscall(nr(101, 117), '16, 1, 0, 0')}`,
    check: (context, { output }) => notIn(output, 'CALL SUCCEEDED', 'ptrace succeeded') ?? victimAlive(context),
  },
  {
    name: 'kernel surface: bpf, perf_event_open, keyctl, userfaultfd, io_uring_setup, open_by_handle_at',
    cmd: () =>
      [
        perlSyscall(nr(321, 280), '0, 0, 0'),
        perlSyscall(nr(298, 241), '0, 0, -1, -1, 0'),
        perlSyscall(nr(250, 219), '0, -3, 0, 0, 0'),
        perlSyscall(nr(323, 282), '0'),
        perlSyscall('425', '1, 0'),
        perlSyscall(nr(304, 265), '-100, 0, 0'),
      ].join('; '),
    check: (_context, { output }) => (output === 'failed: Operation not permitted\n'.repeat(6) ? undefined : `not every call was refused with EPERM: ${JSON.stringify(output)}`),
  },
  {
    name: 'sockets: AF_VSOCK, AF_NETLINK, AF_PACKET and AF_UNIX cannot be created',
    cmd: () => `for family in 40 16 17 1; do perl -e 'use Socket; socket(my $s, $ARGV[0], $ARGV[0] == 16 ? 3 : 1, 0) ? print "CREATED $ARGV[0]\\n" : print "refused $ARGV[0]: $!\\n"' $family; done`,
    check: (_context, { output }) => notIn(output, 'CREATED', `sockets created: ${output.trim()}`),
  },
  {
    name: 'connect to a host Unix socket (also with network allowed)',
    network: true,
    cmd: ({ socketPath }) => `perl -e 'use Socket; socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!\\n"; connect($s, pack_sockaddr_un($ARGV[0])) or die "connect: $!\\n"; print "CONNECTED\\n"' ${socketPath}`,
    check: (context, { output }) => notIn(output, 'CONNECTED', 'connected to a host Unix socket') ?? (context.unixConnections() === 0 ? undefined : 'the host socket saw a connection'),
  },
  {
    name: 'write /tmp, /dev/shm and /var/tmp markers (private or read-only)',
    cmd: ({ marker }) => `echo x > /tmp/escape-${marker}; echo x > /dev/shm/escape-${marker}; echo x > /var/tmp/escape-${marker}; echo x > /run/escape-${marker}`,
    check: ({ marker }) => {
      const paths = ['/tmp', '/dev/shm', '/var/tmp', '/run'].map((dir) => `${dir}/escape-${marker}`);
      const found = paths.filter((path) => existsSync(path));
      for (const path of found) rmSync(path, { force: true });
      return found.length ? `created ${found.join(', ')}` : undefined;
    },
  },
  {
    name: 'read-only mode: no write inside the workspace either',
    mode: 'read-only',
    cmd: () => 'echo x > inside.txt; mkdir d; touch .hidden',
    check: ({ root }) => absent(join(root, 'inside.txt')) ?? absent(join(root, 'd')) ?? absent(join(root, '.hidden')),
  },
  ...(['workspace-write', 'danger-full-access'] as const).map<Attempt>((mode) => ({
    name: `background processes after the command: &, setsid, double fork, nohup (${mode})`,
    mode,
    cmd: ({ marker }) => `sleep ${marker} & setsid sleep ${marker} & (sleep ${marker} &); nohup sleep ${marker} >/dev/null 2>&1 & sleep 0.3; echo started`,
    check: (context) => survivors(context, mode),
  })),
];

/**
 * Attempts that are harmless without a sandbox (they only touch this run's markers and its own
 * victim): the control run executes them in `danger-full-access`, where each must be caught —
 * proof that the checks can fail.
 */
export const CONTROL_ATTEMPTS = [
  'planted secrets in the host environment',
  "write through /proc/<pid>/fd of a host process holding a file open",
  'symlink out of the workspace, then write through it',
  'a symlink the host left in the workspace pointing at a host file',
  'hard link a host file into the workspace, then write it',
  'plant core.fsmonitor in an existing repository, then the host runs git status',
  'create .git (none yet): hooks and config',
  'write sub/.git/config of a nested repository',
  'signals to host processes (the victim pid, pkill)',
];

/** Planted into the host environment for the whole run: must never reach a sandboxed `env`. */
export const PLANTED: Record<string, string> = {
  APP_DATABASE_URL: 'postgres://app:planted-db-secret@db/app',
  DATABASE_URL: 'postgres://planted-db2@db/x',
  GH_PAT: 'ghp_planted_pat',
  MYSQL_PWD: 'planted-mysql',
  AWS_CREDENTIALS: 'planted-aws',
  NPM_AUTH: 'planted-npm',
  PASSWD: 'planted-passwd',
  DB_PASS: 'planted-db-pass',
  INNOCENT_LOOKING: 'planted-innocent',
};

/** Runs every attempt in a fresh workspace through a fresh pair of exec tools. */
export async function runCorpus(attempts: Attempt[] = ATTEMPTS): Promise<CorpusReport> {
  Object.assign(process.env, PLANTED);
  corePatternBefore = readFileSync('/proc/sys/kernel/core_pattern', 'utf8');
  try {
    shadowHead = readFileSync('/etc/shadow', 'utf8').split('\n')[0] ?? '';
  } catch {
    shadowHead = '';
  }
  const outside = mkdtempSync('/var/tmp/exec-escapes-outside-');
  chmodSync(outside, 0o777);
  const hostFile = join(outside, 'host-held.txt');
  writeFileSync(hostFile, 'host-held\n', { mode: 0o666 });
  chmodSync(hostFile, 0o666);
  const hostFd = openSync(hostFile, 'r+');
  const marker = `${300 + Math.floor(Math.random() * 600)}.${Math.floor(Math.random() * 1e6)}`;
  const victim: ChildProcess = spawn('sleep', [marker], { stdio: 'ignore' });
  const socketPath = join(outside, 'host.sock');
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    socket.end();
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  chmodSync(socketPath, 0o777);
  const results: AttemptResult[] = [];
  try {
    for (const attempt of attempts) {
      const mode = attempt.mode ?? 'workspace-write';
      const root = realpathSync(mkdtempSync(join(tmpdir(), 'exec-escapes-ws-')));
      const context: Context = { root, outside, hostFile, hostFd, hostPid: process.pid, victimPid: victim.pid as number, socketPath, unixConnections: () => connections, marker };
      const toolset = execTools({ root, sandbox: mode, approvalPolicy: 'never', network: attempt.network, shell: '/bin/sh', processScope: 'session' });
      try {
        attempt.setup?.(context);
        const answer = await invokeTool(toolset[0], { cmd: attempt.cmd(context), yield_time_ms: 20_000 }, { callId: `escape-${results.length}`, step: { cwd: root }, hooks: false });
        if (answer.error) throw answer.error;
        const output = answer.output;
        const value = codeModeValue(output);
        const result = { output: String(value.output ?? ''), exitCode: typeof value.exit_code === 'number' ? value.exit_code : undefined };
        await toolset.shutdown();
        const escaped = await attempt.check(context, result);
        results.push({ name: attempt.name, mode, verdict: escaped ? 'escaped' : 'held', detail: escaped ?? result.output.slice(0, 300), exitCode: result.exitCode });
      } catch (error) {
        const code = isSwitchyardError(error) ? error.code : undefined;
        results.push({ name: attempt.name, mode, verdict: 'error', detail: `${code ?? 'ERROR'}: ${(error as Error).message}` });
      } finally {
        await toolset.shutdown();
        rmSync(root, { recursive: true, force: true });
      }
    }
  } finally {
    victim.kill('SIGKILL');
    closeSync(hostFd);
    await new Promise((resolve) => server.close(resolve));
    rmSync(outside, { recursive: true, force: true });
    for (const name of Object.keys(PLANTED)) delete process.env[name];
  }
  return { uid: process.getuid?.() ?? -1, attempts: results.length, held: results.filter((result) => result.verdict === 'held').length, results };
}
