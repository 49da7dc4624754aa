// Starts the comparison (main.ts) inside a fresh network namespace that has only loopback, so the
// Codex binary can reach the mock server and nothing else. Needs root (or CAP_SYS_ADMIN) and
// `unshare` / `ip`; `isolationProblem()` says what is missing.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Report } from './report.ts';

const HERE = dirname(fileURLToPath(import.meta.url));

/** Why the suite cannot run here, or `undefined` when a loopback-only network namespace can be made. */
export function isolationProblem(): string | undefined {
  if (process.platform !== 'linux' || process.arch !== 'x64') return `the Codex binary runs on linux-x64; this is ${process.platform}-${process.arch}`;
  try {
    execFileSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'pipe', timeout: 30_000 });
    return undefined;
  } catch (error) {
    const detail = (error as { stderr?: Buffer }).stderr?.toString().trim() || (error as Error).message;
    return `cannot make a loopback-only network namespace (unshare -n as root, and ip from iproute2, are needed): ${detail}`;
  }
}

export interface IsolatedRunOptions {
  codex: string;
  version: string;
  /** Case id prefixes, comma-separated. */
  only?: string;
  concurrency?: number;
  /** Also write the markdown report here. */
  markdown?: string;
  /** Streams each case's line as it finishes (default: stderr). */
  progress?: (line: string) => void;
}

/** Runs every case in the namespace, both sides, and returns the report. */
export async function runIsolated(options: IsolatedRunOptions): Promise<Report> {
  const scratch = mkdtempSync(join(tmpdir(), 'codex-diff-run-'));
  const out = join(scratch, 'report.json');
  const node = [
    process.execPath,
    '--no-node-snapshot',
    '--conditions=@switchyard/source',
    '--import',
    'tsx',
    join(HERE, 'main.ts'),
    '--codex',
    options.codex,
    '--version',
    options.version,
    '--out',
    out,
    '--concurrency',
    String(options.concurrency ?? 4),
    ...(options.only ? ['--only', options.only] : []),
    ...(options.markdown ? ['--markdown', options.markdown] : []),
  ];
  const quoted = node.map((part) => `'${part.replace(/'/g, `'\\''`)}'`).join(' ');
  // A clean environment for both sides: a fresh HOME (no profile scripts of this machine's user),
  // the system PATH plus this Node.
  const home = join(scratch, 'home');
  const env = {
    PATH: `${dirname(process.execPath)}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    HOME: home,
    LANG: 'C.UTF-8',
    SHELL: '/bin/bash',
    ...(process.env.CODEX_DIFF_DUMP ? { CODEX_DIFF_DUMP: process.env.CODEX_DIFF_DUMP } : {}),
  };
  execFileSync('mkdir', ['-p', home]);
  const child = spawn('unshare', ['-n', 'sh', '-c', `ip link set lo up && exec ${quoted}`], { cwd: dirname(HERE), env, stdio: ['ignore', 'inherit', 'pipe'] });
  const progress = options.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  let pending = '';
  child.stderr.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    lines.forEach((line) => progress(line));
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (pending) progress(pending);
  try {
    if (code !== 0) throw new Error(`the comparison run exited with ${code}`);
    return JSON.parse(readFileSync(out, 'utf8')) as Report;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
