import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIRECT_SOURCE, type SandboxMode } from '@switchyard/protocol';
import { createStepContext } from '@switchyard/kit';
import { protectedPaths } from '../../../../packages/sandbox/src/protected-paths';
import { execTools } from '@switchyard/tool-exec';
import { compare, median, type Bench, type BenchFigure } from '../harness';

const RUNS = 15;

/** One `exec_command {cmd: 'true'}` through the real executor, wire arguments in, output out. */
function execTrue(mode: SandboxMode, root: string): () => Promise<void> {
  const toolset = execTools({ root, sandbox: mode, approvalPolicy: 'never', shell: '/bin/sh', processScope: 'session' });
  const [exec] = toolset;
  let calls = 0;
  return async () => {
    const output = await exec.handle({
      callId: `bench-${++calls}`,
      toolName: exec.name,
      source: DIRECT_SOURCE,
      payload: { kind: 'function', arguments: JSON.stringify({ cmd: 'true' }) },
      signal: new AbortController().signal,
      step: createStepContext({ cwd: root }),
    });
    if (output.codeModeResult({ kind: 'function', arguments: '{}' }) === undefined) throw new Error('no output');
  };
}

/** A bare `spawn('/bin/sh', ['-c', 'true'])` until it closes. */
function bareSpawn(root: string): () => Promise<void> {
  return () =>
    new Promise((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', 'true'], { cwd: root, stdio: 'ignore' });
      child.once('error', reject);
      child.once('close', () => resolve());
    });
}

/** Medians of alternating runs (one warm-up each), so load from other processes hits every side alike. */
async function alternate(bodies: Array<() => Promise<void>>): Promise<number[]> {
  const samples = bodies.map(() => [] as number[]);
  for (let run = -1; run < RUNS; run++) {
    for (const [slot, body] of bodies.entries()) {
      const start = performance.now();
      await body();
      if (run >= 0) samples[slot].push(performance.now() - start);
    }
  }
  return samples.map(median);
}

const bench: Bench = {
  name: 'exec_command sandbox',
  async run(): Promise<BenchFigure[]> {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'bench-exec-sandbox-')));
    try {
      const [sandboxed, readOnly, unsandboxed, bare] = await alternate([
        execTrue('workspace-write', root),
        execTrue('read-only', root),
        execTrue('danger-full-access', root),
        bareSpawn(root),
      ]);
      // The per-command walk for nested .git: a workspace of 10,000 directories.
      for (let a = 0; a < 100; a++) for (let b = 0; b < 100; b++) mkdirSync(join(root, `d${a}`, `e${b}`), { recursive: true });
      mkdirSync(join(root, 'd7', 'e7', '.git'));
      const walks: number[] = [];
      for (let run = 0; run < 7; run++) {
        const start = performance.now();
        if (protectedPaths({ root }).length !== 2) throw new Error('expected 2 protected paths');
        walks.push(performance.now() - start);
      }
      const note = `median of ${RUNS} alternating runs; ${process.geteuid?.() === 0 ? 'as root (launcher + idmapped workspace)' : 'as a user'}`;
      const reference = { name: 'exec_command, danger-full-access', value: unsandboxed };
      return [
        compare('exec_command `true`, workspace-write sandbox', sandboxed, 'ms', reference, { note }),
        compare('exec_command `true`, read-only sandbox', readOnly, 'ms', reference, { note }),
        compare('exec_command `true`, danger-full-access (reaper)', unsandboxed, 'ms', { name: 'bare spawn of /bin/sh -c true', value: bare }, { note }),
        { name: 'protected-path walk, 10,000 directories', value: median(walks), unit: 'ms', note: 'per sandboxed command in workspace-write (node_modules is not walked), median of 7' },
      ];
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
};

export default bench;
