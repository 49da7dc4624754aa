import type { SandboxMode } from '@switchyard/protocol';
import { isWithin } from './protected-paths';

/**
 * The host variables a sandboxed command sees by default. Everything else (API keys, database
 * URLs, registry tokens, cloud credentials …) stays out, whatever its name.
 */
export const CORE_ENV_NAMES: readonly string[] = ['PATH', 'HOME', 'LANG', 'LC_*', 'TERM', 'TZ', 'USER', 'SHELL', 'TMPDIR'];

/**
 * Which host variables a command inherits: `core` (the {@link CORE_ENV_NAMES}), `filtered` (all
 * but names that look like secrets), `all`, or a list of names and `PREFIX*` patterns added to the
 * core set.
 */
export type InheritEnv = 'core' | 'filtered' | 'all' | readonly string[];

/** Names `filtered` drops (any case): a filter by name can only guess, which is why sandboxes use `core`. */
export const SECRET_NAME = /KEY|SECRET|TOKEN|PASS|PWD|CREDENTIAL|AUTH|COOKIE|PRIVATE|_PAT$|^PAT_|DATABASE_URL|_DSN$|_URI$|CONNECTION_STRING/i;
/** Ordinary variables `SECRET_NAME` would otherwise catch. */
const NOT_SECRET = new Set(['PWD', 'OLDPWD', 'XAUTHORITY', 'SSH_AUTH_SOCK']);

export interface SandboxEnvironmentOptions {
  /** The sandbox mode: sandboxed modes default to `core`, `danger-full-access` to `filtered`. */
  mode: SandboxMode;
  /** Overrides the mode's default. */
  inheritEnv?: InheritEnv;
  /** Variables set explicitly (win over inherited ones). */
  env?: Record<string, string>;
  /** The host environment. Default `process.env`. */
  hostEnv?: NodeJS.ProcessEnv;
  /**
   * Writable places inside the sandbox: a host `TMPDIR` outside them (and outside `/tmp`) would
   * point at a read-only directory, so it becomes `/tmp`. Only used in sandboxed modes.
   */
  writable?: readonly string[];
}

function matches(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern));
}

/** The environment of a command: inherited host variables (per `inheritEnv`), then `env`. */
export function sandboxEnvironment(options: SandboxEnvironmentOptions): Record<string, string> {
  const inherit = options.inheritEnv ?? (options.mode === 'danger-full-access' ? 'filtered' : 'core');
  const host = options.hostEnv ?? process.env;
  const patterns = inherit === 'core' ? CORE_ENV_NAMES : Array.isArray(inherit) ? [...CORE_ENV_NAMES, ...inherit] : undefined;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(host)) {
    if (typeof value !== 'string') continue;
    if (patterns ? !matches(name, patterns) : inherit === 'filtered' && SECRET_NAME.test(name) && !NOT_SECRET.has(name)) continue;
    env[name] = value;
  }
  if (options.mode !== 'danger-full-access' && env.TMPDIR !== undefined) {
    const places = ['/tmp', ...(options.writable ?? [])];
    if (!env.TMPDIR.startsWith('/') || !places.some((place) => isWithin(place, env.TMPDIR))) env.TMPDIR = '/tmp';
  }
  return Object.assign(env, options.env ?? {});
}
