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
