/**
 * A host started with extra open descriptors (27: a listening socket, 28: a Unix connection, 29:
 * a root-only file, none close-on-exec, as a parent process or a service manager leaves them):
 * runs one command through every way `exec_command` starts one and prints, per way, the
 * descriptors the command's shell holds and what it could do with 28 and 29. `argv[2]` is the
 * workspace (a repository, so the sandbox launcher prepares the next command's sandbox ahead).
 */
import { spawnSync } from 'node:child_process';
import type { JsonObject } from '@switchyard/protocol';
import { invokeTool } from '@switchyard/registry/testing';
import { execTools, type ExecToolsOptions } from '@switchyard/tool-exec';

export interface FdCase {
  name: string;
  /** The descriptors the command's shell held, sorted, space-separated. */
  fds: string;
  /** What the command printed after the list (a line read from 29, `wrote` when 28 took a write). */
  output: string;
}

const root = process.argv[2];
// A simple command, no pipeline: a shell holds the pipes of a pipeline it is starting, which the listing would see.
const LIST = 'ls /proc/$$/fd; echo END';
// perl reads a line from 29 and writes to 28, when it holds them (it is in every sandbox: / is the host's, read-only).
const USE = `perl -e 'if (open(my $f, "<&=", 29)) { seek($f, 0, 0); my $l = <$f>; print "read: $l" } if (open(my $c, ">&=", 28)) { print "wrote\\n" if syswrite($c, "written by the command\\n") }'`;
const COMMAND = `${LIST}; ${USE}`;

function split(text: string): Omit<FdCase, 'name'> {
  const [listing = '', rest = ''] = text.replace(/\r/g, '').split('END\n');
  const words = listing.split(/\s+/).filter(Boolean);
  // Not a listing (the call failed, or answered before the command ended): keep the text, so the failure says what came back.
  if (words.some((word) => !/^\d+$/.test(word))) return { fds: `not a listing: ${text.slice(0, 600)}`, output: '' };
  const fds = words.map(Number).sort((a, b) => a - b);
  return { fds: fds.join(' '), output: rest.trim() };
}

async function fdCase(name: string, options: ExecToolsOptions, tty = false, times = 1): Promise<FdCase> {
  const exec = execTools({ root, approvalPolicy: 'never', shell: '/bin/sh', ...options });
  try {
    let text = '';
    for (let time = 0; time < times; time++) {
      const result = await invokeTool(exec[0], { kind: 'function', arguments: JSON.stringify({ cmd: COMMAND, tty, yield_time_ms: 20_000 } satisfies JsonObject) }, { step: { cwd: root, sessionId: 'fds' }, hooks: false });
      const item = result.output?.toResponseItem('c', { kind: 'function', arguments: '{}' }) as { output?: string } | undefined;
      text = item?.output ?? String(result.error);
    }
    return { name, ...split(text.split('\nOutput:\n')[1] ?? text) };
  } finally {
    await exec.shutdown();
  }
}

const host = spawnSync('/bin/sh', ['-c', COMMAND], { encoding: 'utf8' });
const cases: FdCase[] = [
  // Control: a process the host starts itself inherits them (the listing sees what leaks).
  { name: 'control: the host spawns /bin/sh itself', ...split(host.stdout) },
  await fdCase('sandboxed, through the session launcher', { sandbox: 'workspace-write' }),
  await fdCase('sandboxed, in the sandbox prepared ahead (second command)', { sandbox: 'workspace-write' }, false, 2),
  await fdCase('sandboxed, a launcher per command', { sandbox: 'workspace-write', spawner: false }),
  await fdCase('sandboxed, tty', { sandbox: 'workspace-write' }, true),
  await fdCase('danger-full-access, through the session spawner', { sandbox: 'danger-full-access' }),
  await fdCase('danger-full-access, a reaper per command', { sandbox: 'danger-full-access', spawner: false }),
  await fdCase('danger-full-access, tty', { sandbox: 'danger-full-access' }, true),
];
process.stdout.write(`${JSON.stringify({ uid: process.getuid?.(), cases })}\n`);
