import { RespondToModelError, type SandboxMode } from '@switchyard/protocol';

/** What a sandboxed mode needs and this host lacks (named in every refusal). */
export type SandboxMissing = 'linux' | 'architecture' | 'bubblewrap' | 'user-namespaces' | 'seccomp' | 'perl' | 'idmapped-mounts' | 'workspace';

/** How each missing piece is fixed (the end of the refusal message). */
const REMEDY: Record<SandboxMissing, string> = {
  linux: 'run the host on Linux',
  architecture: 'run the host on x86_64 or aarch64',
  bubblewrap: 'install bubblewrap',
  'user-namespaces': 'allow unprivileged user namespaces (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, AppArmor)',
  seccomp: 'use a kernel with seccomp filters',
  perl: 'install perl',
  'idmapped-mounts': 'use a kernel and file system with idmapped mounts, or run the host as a non-root user',
  workspace: 'make the workspace an existing directory',
};

/**
 * A refusal: a `RespondToModelError` with code `SANDBOX_UNAVAILABLE`, the missing piece, why the
 * sandbox cannot start and how to fix it (all inside `message` too).
 */
export type SandboxUnavailableError = RespondToModelError & { readonly missing: SandboxMissing; readonly reason: string; readonly remedy: string };

/**
 * The model-visible refusal (code `SANDBOX_UNAVAILABLE`), naming what is missing: a sandboxed mode
 * never falls back to running unsandboxed.
 */
export function sandboxUnavailable(mode: SandboxMode, why: string, missing: SandboxMissing): SandboxUnavailableError {
  const error = new RespondToModelError(
    `sandbox unavailable: ${why}; refusing to run the command without the ${mode} sandbox (${REMEDY[missing]}, or configure the sandbox as danger-full-access)`,
    { code: 'SANDBOX_UNAVAILABLE' },
  );
  return Object.assign(error, { missing, reason: why, remedy: REMEDY[missing] });
}

/**
 * The failure of a command whose `.git` check could not visit every directory of a writable root
 * (more than `bound`, `node_modules` not counted): a `RespondToModelError` with code
 * `LIMIT_EXCEEDED`. `before`: nothing was run (what to keep read-only is unknown);
 * `after`: the command's output is withheld and it is stopped (a `.git` it created may remain).
 * `places` name the roots.
 */
export function gitWalkExceeded(places: readonly string[], bound: number, phase: 'before' | 'after'): RespondToModelError {
  const where = places.join(' and ');
  const size = `more than ${bound.toLocaleString('en-US')} directories (node_modules not counted)`;
  const remedy = `remove the directories that are not needed (with sandbox_permissions "require_escalated"), or ask the user to raise the sandbox limit gitWalkDirectories`;
  const message =
    phase === 'before'
      ? `sandbox: nothing was run: ${where} holds ${size}, more than the sandbox searches for .git metadata to keep read-only; ${remedy}`
      : `sandbox: the command failed closed: ${where} now holds ${size}, so the search for .git metadata the command may have created (whose hooks and config the host's git would run) could not finish; its output is withheld and it was stopped if still running. Do not run git there; ${remedy}`;
  return new RespondToModelError(message, { code: 'LIMIT_EXCEEDED' });
}
