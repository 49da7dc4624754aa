import type { ToolExecutor } from './executor';
import { displayName } from './tool-name';
import { VERSION } from './version';

/**
 * The contract line of a version of this package: `0.M` before 1.0 (every 0.x minor is a line of
 * its own, as a caret range `^0.M.0` reads it), the major from 1.0 on. `undefined` for a string
 * that is not a `major.minor.patch` version.
 */
function contractLine(version: string): { major: number; minor: number } | undefined {
  const match = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(version.trim());
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]) };
}

/**
 * Whether an executor built against `builtAgainst` (the version of `@switchyard/protocol` it was
 * built with) may run in a host whose protocol is `host` — the rule a plugin's peer range
 * `^<builtAgainst>` states: before 1.0 the same `0.minor` (a 0.x minor may change the contract;
 * patches never do), from 1.0 the same major with a host minor at least the plugin's (a plugin may
 * use what its minor added). A version that is not `major.minor.patch` is never compatible. Never throws.
 */
export function isCompatibleProtocolVersion(builtAgainst: string, host: string = VERSION): boolean {
  const plugin = contractLine(builtAgainst);
  const own = contractLine(host);
  if (!plugin || !own || plugin.major !== own.major) return false;
  return own.major === 0 ? plugin.minor === own.minor : own.minor >= plugin.minor;
}

/**
 * Why `executor` cannot be registered in a host running protocol `host` (default: this copy's
 * {@link VERSION}), naming both versions, or `undefined` when it can: an executor without
 * `protocolVersion` (hand-written, or from before the field) is taken as compatible. The registry
 * and the session turn the reason into a `CONFIG` error. Never throws.
 */
export function executorProtocolProblem(executor: ToolExecutor, host: string = VERSION): string | undefined {
  const built = executor.protocolVersion;
  if (built === undefined) return undefined;
  if (typeof built === 'string' && isCompatibleProtocolVersion(built, host)) return undefined;
  const plugin = typeof built === 'string' ? built : String(built);
  const line = contractLine(host);
  const hostLine = line ? (line.major === 0 ? `^0.${line.minor}.0` : `^${line.major}.${line.minor}.0`) : host;
  return (
    `tool ${displayName(executor.name)} was built against @switchyard/protocol ${plugin}, and this host runs @switchyard/protocol ${host}; ` +
    `they do not share a contract: install a release of the plugin built for ${hostLine} (its peer range must admit ${host})`
  );
}
