import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ResponseItem } from '@switchyard/protocol';
import { createSession, type Session, type Step } from '@switchyard/session';
import { execTools, type ExecToolsOptions } from '@switchyard/tool-exec';
import { applyPatchTool } from '@switchyard/tool-apply-patch';
import { checkSandbox, findExecutable } from '@switchyard/sandbox';
import { report } from '../src/profile';
import { callItem, texts } from './helpers';

// A service's layout: one data directory (mode 0700, outside the places the sandbox hides: /tmp,
// /root, /home, /run) holding each tenant's workspace and the server's own files (its SQLite WAL
// with every tenant's history). One execTools() toolset serves every session; each session has its
// tenant's workspace as cwd. Real bubblewrap, real sessions, default options otherwise.
const asRoot = process.geteuid?.() === 0;
const roots: string[] = [];
afterAll(() => {
  for (const dir of roots) {
    chmodSync(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  }
});
const held: string[] = [];
afterAll(() => report('tenant isolation', `${held.length} checks held:\n  - ${held.join('\n  - ')}`));

interface Service {
  data: string;
  workspace: (tenant: string) => string;
}

function service(): Service {
  const data = realpathSync(mkdtempSync('/var/tmp/reliability-tenants-'));
  roots.push(data);
  for (const tenant of ['a', 'b']) mkdirSync(join(data, 'tenants', tenant), { recursive: true });
  writeFileSync(join(data, 'tenants', 'a', 'secret.txt'), 'tenant-a-secret\n');
  writeFileSync(join(data, 'tenants', 'b', 'own.txt'), 'tenant-b-own\n');
  writeFileSync(join(data, 'sessions.db-wal'), 'every tenant history\n');
  chmodSync(data, 0o700);
  return { data, workspace: (tenant) => join(data, 'tenants', tenant) };
}

interface Tenant {
  session: Session;
  step: Step;
  run(cmd: string, extra?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

let calls = 0;

async function execTenant(name: string, cwd: string, tools: ReturnType<typeof execTools> | Array<ReturnType<typeof execTools>[number]>): Promise<Tenant> {
  const session = createSession({ toolMode: 'direct', tools: [...tools], cwd, tenant: name });
  const turn = session.beginTurn();
  const step = await turn.step();
  return {
    session,
    step,
    async run(cmd, extra = {}) {
      const item = await step.dispatch(callItem(`${name}-${++calls}`, 'exec_command', { cmd, yield_time_ms: 20_000, ...extra }));
      return texts(item as ResponseItem).join('\n');
    },
    async close() {
      await turn.end();
      await session.shutdown();
    },
  };
}

/** The output of an exec_command answer (after its `Output:` line). */
const printedOutput = (answer: string) => answer.slice(answer.indexOf('Output:\n') + 'Output:\n'.length);

const views: Array<{ name: string; options: ExecToolsOptions }> = [
  { name: 'restricted read view (readableRoots: [])', options: { readableRoots: [] } },
  { name: 'full read view', options: {} },
];

describe.each(views)('tenants cannot read each other: $name, data directory at 0700', ({ name, options }) => {
  it("tenant B's cat of A's file fails, B's own files work, the server's files stay unseen", async () => {
    const { data, workspace } = service();
    const exec = execTools({ approvalPolicy: 'never', shell: '/bin/sh', ...options });
    const b = await execTenant('b', workspace('b'), exec);
    const a = await execTenant('a', workspace('a'), exec);
    try {
      const own = await b.run('cat own.txt && echo written > new.txt && cat new.txt');
      expect(own).toContain('Process exited with code 0');
      expect(printedOutput(own)).toBe('tenant-b-own\nwritten\n');
      const stolen = await b.run(`cat ${workspace('a')}/secret.txt`);
      expect(stolen).toContain('Process exited with code 1');
      expect(printedOutput(stolen)).toBe(`cat: ${workspace('a')}/secret.txt: No such file or directory\n`);
      const wal = await b.run(`cat ${data}/sessions.db-wal; ls -A ${data} ${data}/tenants`);
      expect(wal).not.toContain('every tenant history');
      expect(printedOutput(wal)).toContain(`${data}/tenants:\nb\n`);
      // A is walled off from B the same way, and its own file works
      expect(printedOutput(await a.run('cat secret.txt'))).toBe('tenant-a-secret\n');
      expect(printedOutput(await a.run(`cat ${workspace('b')}/own.txt 2>&1; test -e ${workspace('b')}/new.txt || echo no-b`))).toBe(`cat: ${workspace('b')}/own.txt: No such file or directory\nno-b\n`);
      expect(readFileSync(join(workspace('b'), 'new.txt'), 'utf8')).toBe('written\n');
      held.push(`${name}: B cannot read A's file or the server's WAL, sees only its own workspace in the data directory; A likewise`);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await exec.shutdown();
    }
  }, 120_000);
});

describe('apply_patch honours the same read view', () => {
  it("B's sandboxed patches write in B's workspace; A's files are not there to read or overwrite", async () => {
    const { workspace } = service();
    const exec = execTools({ approvalPolicy: 'never', shell: '/bin/sh', readableRoots: [] });
    // allowOutsideRoot: the path check is off, so only the sandbox keeps the patch away from A
    const patch = applyPatchTool({ sandbox: { mode: 'workspace-write', readableRoots: [] }, allowOutsideRoot: true });
    const b = await execTenant('b', workspace('b'), [...exec, patch]);
    try {
      const add = await b.step.dispatch({ type: 'custom_tool_call', call_id: 'p1', name: 'apply_patch', input: '*** Begin Patch\n*** Add File: patched.txt\n+by b\n*** End Patch' });
      expect(texts(add as ResponseItem).join('')).toContain('Success. Updated the following files:\nA patched.txt');
      expect(readFileSync(join(workspace('b'), 'patched.txt'), 'utf8')).toBe('by b\n');
      const secret = join(workspace('a'), 'secret.txt');
      const update = await b.step.dispatch({ type: 'custom_tool_call', call_id: 'p2', name: 'apply_patch', input: `*** Begin Patch\n*** Update File: ${secret}\n@@\n-tenant-a-secret\n+overwritten by b\n*** End Patch` });
      expect(texts(update as ResponseItem).join('')).toMatch(/^apply_patch verification failed: Failed to read file to update .*secret\.txt: No such file or directory/);
      const add2 = await b.step.dispatch({ type: 'custom_tool_call', call_id: 'p3', name: 'apply_patch', input: `*** Begin Patch\n*** Add File: ${workspace('a')}/planted.txt\n+x\n*** End Patch` });
      expect(texts(add2 as ResponseItem).join('')).not.toContain('Success');
      expect(readFileSync(secret, 'utf8')).toBe('tenant-a-secret\n');
      expect(existsSync(join(workspace('a'), 'planted.txt'))).toBe(false);
      held.push('apply_patch (sandboxed helper, path check off): B patches its own workspace; A\'s file cannot be read nor a file planted beside it');
    } finally {
      await b.close();
      await exec.shutdown();
    }
  }, 180_000);
});

describe('what one tenant can still observe of another', () => {
  it('no processes, no loopback listener (without network), no cgroups in the restricted view; the machine-wide load and memory figures, yes', async () => {
    const { workspace } = service();
    const restricted = execTools({ approvalPolicy: 'never', shell: '/bin/sh', readableRoots: [], processScope: 'session' });
    const full = execTools({ approvalPolicy: 'never', shell: '/bin/sh', processScope: 'session' });
    const a = await execTenant('a', workspace('a'), restricted);
    const b = await execTenant('b', workspace('b'), restricted);
    const bFull = await execTenant('b', workspace('b'), full);
    const marker = `${400 + Math.floor(Math.random() * 500)}.${Math.floor(Math.random() * 1e6)}`;
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const perl = findExecutable('perl');
    try {
      // A: a long-lived process and a loopback listener that hands out a secret
      const listener = `perl -MIO::Socket::INET -e '$s=IO::Socket::INET->new(LocalAddr=>"127.0.0.1",LocalPort=>${port},Listen=>5,ReuseAddr=>1) or die; while($c=$s->accept){print $c "a-listener-secret\\n"; close $c}' & sleep ${marker}`;
      expect(await a.run(listener, { yield_time_ms: 1_000 })).toContain('Process running with session ID');
      // B sees only its own processes (a PID namespace per command) and cannot signal A's
      const scan = (pattern: string) => `for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | tr '\\0' ' '; echo; done | grep -c "${pattern}"`;
      const ps = printedOutput(await b.run(`${scan(`slee[p] ${marker}`)}; kill -0 1 && echo own-init`));
      expect(ps).toBe('0\nown-init\n');
      // control: the same scan finds a process of its own command
      expect(printedOutput(await b.run(`m=1${marker}; sleep $m & ${scan(`slee[p] 1${marker}`)}; kill $!`))).toBe('1\n');
      // without network each command has its own loopback
      const connect = `perl -MIO::Socket::INET -e '$c=IO::Socket::INET->new(PeerAddr=>"127.0.0.1",PeerPort=>${port}) or do { print "refused\\n"; exit 0 }; print <$c>'`;
      if (perl) expect(printedOutput(await b.run(connect))).toBe('refused\n');
      // the restricted view has no /sys (no cgroup names of other commands); the full view shows them read-only
      expect(printedOutput(await b.run('ls /sys 2>&1 | head -1'))).toBe("ls: cannot access '/sys': No such file or directory\n");
      if (asRoot) expect(printedOutput(await bFull.run("find /sys/fs/cgroup -maxdepth 3 -name 'switchyard-*' | grep -c switchyard"))).not.toBe('0\n');
      // machine-wide figures stay visible in both views: a side channel on the others' activity
      const load = printedOutput(await b.run('cat /proc/loadavg; head -1 /proc/meminfo; df -P . | tail -1'));
      expect(load).toMatch(/^\d+\.\d+ \d+\.\d+ \d+\.\d+ \d+\/\d+ \d+\nMemTotal:\s+\d+ kB\n\S+\s+\d+\s+\d+\s+\d+\s+\d+% \S+\n$/);
      held.push('B sees none of A\'s processes, cannot reach A\'s loopback listener, sees no /sys in the restricted view (the full view lists every command\'s cgroup); /proc/loadavg, /proc/meminfo and the data file system\'s usage stay visible');
    } finally {
      await Promise.all([a.close(), b.close(), bFull.close()]);
      await Promise.all([restricted.shutdown(), full.shutdown()]);
    }
  }, 180_000);

  it.runIf(findExecutable('perl') !== undefined)('with network: true, tenants share the host network: a listener of A is reachable by B', async () => {
    const { workspace } = service();
    const networked = execTools({ approvalPolicy: 'never', shell: '/bin/sh', readableRoots: [], network: true, processScope: 'session' });
    const a = await execTenant('a', workspace('a'), networked);
    const b = await execTenant('b', workspace('b'), networked);
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    try {
      const listener = `perl -MIO::Socket::INET -e '$s=IO::Socket::INET->new(LocalAddr=>"127.0.0.1",LocalPort=>${port},Listen=>5,ReuseAddr=>1) or die "listen: $!"; print "listening\\n"; $|=1; while($c=$s->accept){print $c "a-listener-secret\\n"; close $c}'`;
      expect(await a.run(listener, { yield_time_ms: 1_500 })).toContain('listening');
      const connect = `perl -MIO::Socket::INET -e '$c=IO::Socket::INET->new(PeerAddr=>"127.0.0.1",PeerPort=>${port}) or do { print "refused\\n"; exit 0 }; print <$c>'`;
      expect(printedOutput(await b.run(connect))).toBe('a-listener-secret\n');
      held.push('with network: true, B reached A\'s loopback listener (one host network)');
    } finally {
      await Promise.all([a.close(), b.close()]);
      await networked.shutdown();
    }
  }, 120_000);
});

describe('a hundred sessions start one sandbox probe per policy shape', () => {
  it('100 sessions with exec tools on distinct workspaces, in two read views: two probes, nothing else started', async () => {
    const real = findExecutable('bwrap');
    expect(real).toBeDefined();
    const scratch = realpathSync(mkdtempSync('/var/tmp/reliability-probes-'));
    roots.push(scratch);
    chmodSync(scratch, 0o755);
    // every bubblewrap start (as root: after the launcher dropped to the sandbox user) is logged, then runs the real one
    const log = join(scratch, 'bwrap.log');
    writeFileSync(log, '');
    chmodSync(log, 0o666);
    const wrapper = join(scratch, 'bwrap.sh');
    writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> ${log}\nexec ${real} "$@"\n`, { mode: 0o755 });
    const full = execTools({ approvalPolicy: 'never', bwrapPath: wrapper });
    const restricted = execTools({ approvalPolicy: 'never', bwrapPath: wrapper, readableRoots: [] });
    const sessions: Session[] = [];
    for (let index = 0; index < 100; index++) {
      const cwd = join(scratch, `tenant-${index}`);
      mkdirSync(cwd);
      sessions.push(createSession({ toolMode: 'direct', tools: [...(index % 2 === 0 ? full : restricted)], cwd, tenant: `tenant-${index}` }));
    }
    try {
      // A check of each shape resolves once its one probe ended; from then on every check of that shape is answered from memory.
      const checks = await Promise.all([
        checkSandbox({ mode: 'workspace-write', root: join(scratch, 'tenant-0'), bwrapPath: wrapper }),
        checkSandbox({ mode: 'workspace-write', root: join(scratch, 'tenant-1'), bwrapPath: wrapper, readableRoots: [] }),
      ]);
      expect(checks).toEqual([{ available: true }, { available: true }]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const started = readFileSync(log, 'utf8').split('\n').filter((line) => line !== '' && line !== '--version');
      const probes = started.filter((line) => line.endsWith('-- /bin/sh -c :'));
      expect(probes).toHaveLength(2);
      expect(probes.filter((line) => line.includes('--remount-ro /'))).toHaveLength(1);
      expect(started).toHaveLength(2);
      held.push(`100 sessions on 100 workspaces, two read views: ${probes.length} sandbox probes, ${started.length} bubblewrap starts in all`);
    } finally {
      await Promise.all(sessions.map((session) => session.shutdown()));
      await Promise.all([full.shutdown(), restricted.shutdown()]);
    }
  }, 180_000);
});
