// The Codex CLI binary, as the npm registry publishes it (`@openai/codex@<version>-linux-x64`, the
// package `@openai/codex` installs as its optional `@openai/codex-linux-x64`), fetched once into
// the project's machine-wide cache beside the official Node builds.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from '../../../scripts/official-node.mjs';

/** The version the READMEs follow (compared in CI), and the newer one compared on demand. */
export const CODEX_VERSIONS = { reference: '0.144.6', newer: '0.169.0' } as const;

/** Fetches `@openai/codex@<version>-linux-x64` into the cache once; returns the `codex` binary's path. */
export function ensureCodex(version: string, log: (line: string) => void = console.log): string {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the Codex binary is fetched as its linux-x64 build; this machine is ${process.platform}-${process.arch}`);
  }
  const prefix = join(cacheDir(), `codex-${version}`);
  const binary = join(prefix, 'node_modules', '@openai', 'codex', 'vendor', 'x86_64-unknown-linux-musl', 'bin', 'codex');
  if (versionOf(binary) === version) return binary;
  log(`codex-differential: fetching Codex ${version} (npm registry: @openai/codex@${version}-linux-x64) into ${prefix}`);
  execFileSync(
    'npm',
    ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', `@openai/codex@${version}-linux-x64`],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const found = versionOf(binary);
  if (found !== version) throw new Error(`fetching Codex ${version} failed: ${binary} reports ${found ?? 'nothing'}`);
  return binary;
}

function versionOf(binary: string): string | undefined {
  if (!existsSync(binary)) return undefined;
  try {
    // `codex-cli 0.144.6`
    return execFileSync(binary, ['--version'], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent' } }).trim().split(' ').pop();
  } catch {
    return undefined;
  }
}
