import type { SandboxMode } from '@switchyard/protocol';
import type { SandboxLimits } from './resource-limits';
import { isProtectedPath, isWithin, protectedPaths, resolveExisting, writableRoots, type ProtectedPath } from './protected-paths';

/** Where and how a sandboxed process may run. */
export interface SandboxPolicy {
  /** `read-only`, `workspace-write`, or `danger-full-access` (no sandbox, process hygiene only). */
  mode: SandboxMode;
  /** The workspace root: writable in `workspace-write`, readable in every mode. */
  root: string;
  /** More writable paths in `workspace-write` (absolute). */
  writableRoots?: readonly string[];
  /**
   * Restricted read mode. When given (even empty), a sandboxed command sees only the system
   * directories programs need (`PLATFORM_READ_ROOTS`: `/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`, …,
   * read-only), `/dev`, a new `/proc`, a private `/tmp`, the workspace and `writableRoots`, and
   * these paths (absolute, read-only; one that does not exist is left out) — nothing else of the
   * host. Absent (the default): all of `/` read-only, the host's private places hidden.
   */
  readableRoots?: readonly string[];
  /** Network inside the sandbox. Default false: a private network namespace with loopback only. */
  network?: boolean;
  /** The bubblewrap binary: an absolute path, or a name searched on `PATH`. Default `bwrap`. */
  bwrapPath?: string;
  /**
   * The unprivileged user sandboxed commands run as when the host runs as root. Default 65534:65534
   * (`nobody`). A host running as another user always runs them as itself.
   */
  sandboxUser?: { uid: number; gid: number };
  /** Caps per command (processes, memory, tmpfs size); defaults in `DEFAULT_SANDBOX_LIMITS`. Sandboxed modes only. */
  limits?: SandboxLimits;
}

/** The answer of {@link checkWritePath}. */
export type WriteCheck = { ok: true; path: string } | { ok: false; path: string; reason: string };

/**
 * Whether a sandboxed tool may write `path` under `policy` (returns, never throws): never in
 * `read-only`; in `workspace-write` only inside a writable root and outside every protected path
 * (`protected` defaults to {@link protectedPaths} of the policy); always in `danger-full-access`.
 * `path` is the resolved target (links of its existing part followed).
 */
export function checkWritePath(path: string, policy: SandboxPolicy, protectedList?: readonly ProtectedPath[]): WriteCheck {
  const real = resolveExisting(path);
  if (policy.mode === 'danger-full-access') return { ok: true, path: real };
  if (policy.mode === 'read-only') return { ok: false, path: real, reason: 'the sandbox is read-only' };
  if (!writableRoots(policy).some((root) => isWithin(root, real))) return { ok: false, path: real, reason: 'it is outside the writable roots' };
  if (isProtectedPath(real, protectedList ?? protectedPaths(policy))) return { ok: false, path: real, reason: 'it is a protected path (.git stays read-only)' };
  return { ok: true, path: real };
}
