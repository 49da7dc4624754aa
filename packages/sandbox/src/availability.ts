import { spawn } from 'node:child_process';
import { sandboxUnavailable, type SandboxMissing, type SandboxUnavailableError } from './errors';
import type { SandboxPolicy } from './policy';
import { writableRoots } from './protected-paths';
import { sandboxCommand } from './sandbox-command';

/** The answer of {@link checkSandbox}. */
export type SandboxCheck = { available: true } | { available: false; missing: SandboxMissing; error: SandboxUnavailableError };

const PROBE_TIMEOUT_MS = 20_000;
const working = new Set<string>();

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
 * Whether `policy` can be enforced here: `danger-full-access` always; a sandboxed mode after a real
 * start of `/bin/sh -c :` in it (bubblewrap, user namespaces, seccomp, as root perl and idmapped
 * mounts). Resolves, never rejects; a success is remembered for the process's lifetime, a failure
 * is probed again next time (someone may install what was missing).
 */
export async function checkSandbox(policy: SandboxPolicy): Promise<SandboxCheck> {
  if (policy.mode === 'danger-full-access') return { available: true };
  let command;
  try {
    command = sandboxCommand(['/bin/sh', '-c', ':'], policy, { cwd: policy.root, probe: true });
  } catch (error) {
    const refusal = error as SandboxUnavailableError;
    if (refusal.missing === undefined) throw error;
    return { available: false, missing: refusal.missing, error: refusal };
  }
  const key = JSON.stringify([policy.mode, writableRoots(policy), policy.network === true, policy.bwrapPath, policy.sandboxUser, process.geteuid?.()]);
  if (working.has(key)) return { available: true };
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
  if (result.code === 0) {
    working.add(key);
    return { available: true };
  }
  const { missing, why } = classify(result.stderr);
  return { available: false, missing, error: sandboxUnavailable(policy.mode, why, missing) };
}

/** {@link checkSandbox}, throwing the `SANDBOX_UNAVAILABLE` refusal when the sandbox cannot start. */
export async function assertSandbox(policy: SandboxPolicy): Promise<void> {
  const check = await checkSandbox(policy);
  if (!check.available) throw check.error;
}
