import { spawn } from 'node:child_process';
import { sandboxUnavailable, type SandboxMissing, type SandboxUnavailableError } from './errors';
import type { SandboxPolicy } from './policy';
import { stat } from 'node:fs/promises';
import { findExecutable } from './find-executable';
import { learnBubblewrap, sandboxCommand } from './sandbox-command';

/** The answer of {@link checkSandbox}. */
export type SandboxCheck = { available: true } | { available: false; missing: SandboxMissing; error: SandboxUnavailableError };

const PROBE_TIMEOUT_MS = 20_000;

/** Which piece a failed start names in its message (bubblewrap's and the root launcher's texts). */
function classify(stderr: string): { missing: SandboxMissing; why: string } {
  const line = stderr.trim().split('\n').find((text) => text.trim() !== '') ?? 'no output';
  if (/sandbox launcher: user namespace/.test(stderr)) return { missing: 'user-namespaces', why: `user namespaces are not available (${line})` };
  if (/sandbox launcher: (idmapped mount|open_tree|move_mount)/.test(stderr)) return { missing: 'idmapped-mounts', why: `the workspace cannot be idmapped for the sandbox user (${line})` };
  if (/seccomp/i.test(stderr)) return { missing: 'seccomp', why: `the seccomp filter cannot be installed (${line})` };
  if (/uid map|gid map|user namespace|No permissions to creat|setting up uid|unshare|Operation not permitted/i.test(stderr)) {
    return { missing: 'user-namespaces', why: `bubblewrap cannot create an unprivileged user namespace (${line})` };
  }
  return { missing: 'bubblewrap', why: `bubblewrap failed to start a sandbox (${line})` };
}

/**
 * What decides whether a policy can start, apart from its paths: the mode, network, the restricted
 * view, which bubblewrap, the sandbox user, who the host is, and the file systems of the roots
 * (as root the launcher idmaps them, which a file system supports or not). Policies of one shape
 * share one probe, so a host with a workspace per session probes once, not once per session.
 * `undefined` when a root is missing (the probe would refuse with `workspace`).
 */
async function policyShape(policy: SandboxPolicy): Promise<string | undefined> {
  const roots = [policy.root, ...(policy.writableRoots ?? []), ...(policy.readableRoots ?? [])];
  const devices = new Set<number>();
  for (const [index, path] of roots.entries()) {
    try {
      devices.add((await stat(path)).dev);
    } catch {
      // a writable or readable root that does not exist is skipped by the command as well; the workspace must exist
      if (index === 0) return undefined;
    }
  }
  const restricted = policy.readableRoots !== undefined;
  return JSON.stringify([policy.mode, policy.network === true, restricted, policy.bwrapPath ?? 'bwrap', policy.sandboxUser ?? null, process.geteuid?.() ?? null, [...devices].sort()]);
}

/** Probes of each policy shape: running, or succeeded (a failure is forgotten once known, so the next check probes again). */
const probes = new Map<string, Promise<SandboxCheck>>();

/** Starts `/bin/sh -c :` in the sandbox of `policy` (asynchronously) and reads how it ended. */
async function probe(policy: SandboxPolicy): Promise<SandboxCheck> {
  const bwrap = findExecutable(policy.bwrapPath ?? 'bwrap');
  if (bwrap) await learnBubblewrap(bwrap);
  let command;
  try {
    command = sandboxCommand(['/bin/sh', '-c', ':'], policy, { cwd: policy.root, probe: true });
  } catch (error) {
    const refusal = error as SandboxUnavailableError;
    if (refusal.missing === undefined) throw error;
    return { available: false, missing: refusal.missing, error: refusal };
  }
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    let stderr = '';
    const child = spawn(command.file, command.args, { cwd: policy.root, stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stderr: error.message });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
  if (result.code === 0) return { available: true };
  const { missing, why } = classify(result.stderr);
  return { available: false, missing, error: sandboxUnavailable(policy.mode, why, missing) };
}

/**
 * Whether `policy` can be enforced here: `danger-full-access` always; a sandboxed mode after a real
 * start of `/bin/sh -c :` in it (bubblewrap, user namespaces, seccomp, as root perl and idmapped
 * mounts). One probe per policy shape and process, never per workspace: callers with the same
 * shape at the same time share the probe, a success is remembered for the process's lifetime, a
 * failure is probed again next time (someone may install what was missing). Nothing here blocks
 * the event loop on a process. Resolves, never rejects.
 */
export async function checkSandbox(policy: SandboxPolicy): Promise<SandboxCheck> {
  if (policy.mode === 'danger-full-access') return { available: true };
  const shape = await policyShape(policy);
  // a missing workspace: the command's own refusal, without a probe
  if (shape === undefined) return probe(policy);
  let running = probes.get(shape);
  if (!running) {
    running = probe(policy).catch((error: unknown) => {
      probes.delete(shape);
      throw error;
    });
    probes.set(shape, running);
    void running.then((check) => {
      if (!check.available) probes.delete(shape);
    }, () => undefined);
  }
  return running;
}

/** {@link checkSandbox}, throwing the `SANDBOX_UNAVAILABLE` refusal when the sandbox cannot start. */
export async function assertSandbox(policy: SandboxPolicy): Promise<void> {
  const check = await checkSandbox(policy);
  if (!check.available) throw check.error;
}
