import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { running, workerChildren } from '@switchyard/config/proc';
import { until } from '@switchyard/test-helpers';

// `mcp serve` runs cells in worker processes (the default isolation); none may outlive it, whether
// its client disconnects (stdin closes) or it is killed. Checked in /proc, scoped to the children
// of the serve process this test starts.
const CLI_ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVE = fileURLToPath(new URL('../test/fixtures/serve.ts', import.meta.url));
const workspace = mkdtempSync(join(tmpdir(), 'switchyard-serve-workers-'));
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

/** Starts `mcp serve`, initializes it and starts a cell that spins; resolves once the cell yielded. */
async function serveWithSpinningCell() {
  const child = spawn(process.execPath, ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', 'tsx', SERVE, '--cwd', workspace], {
    cwd: CLI_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const replies = new Map<number, (message: { result?: unknown; error?: unknown }) => void>();
  let buffer = '';
  child.stdout.on('data', (data) => {
    buffer += data;
    for (let index = buffer.indexOf('\n'); index >= 0; index = buffer.indexOf('\n')) {
      const line = buffer.slice(0, index);
      buffer = buffer.slice(index + 1);
      const message = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown };
      if (typeof message.id === 'number') replies.get(message.id)?.(message);
    }
  });
  let id = 0;
  const request = (method: string, params: unknown) =>
    new Promise<{ result?: unknown; error?: unknown }>((resolve) => {
      replies.set(++id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'orphan-test', version: '1' } });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  const called = await request('tools/call', { name: 'exec', arguments: { code: `text('spinning'); yield_control(); while (true) {}` } });
  const first = (called.result as { content: Array<{ text: string }> }).content[0].text;
  expect(first).toMatch(/^Script running with cell ID \S+\n/);
  await until(() => workerChildren(child.pid!).length >= 1, 'a worker process', 30_000);
  return { child, exited, workers: workerChildren(child.pid!) };
}

describe('mcp serve leaves no worker process behind', () => {
  it('when its client disconnects (stdin closes): serve exits 0 and its workers end', async () => {
    const { child, exited, workers } = await serveWithSpinningCell();
    try {
      child.stdin.end();
      expect(await exited).toEqual({ code: 0, signal: null });
      await until(() => workers.every((pid) => !running(pid)), 'the workers to exit', 15_000);
    } finally {
      for (const pid of workers) if (running(pid)) process.kill(pid, 'SIGKILL');
    }
  }, 90_000);

  it('when it is SIGKILLed', async () => {
    const { child, exited, workers } = await serveWithSpinningCell();
    try {
      child.kill('SIGKILL');
      await exited;
      await until(() => workers.every((pid) => !running(pid)), 'the workers to exit', 15_000);
    } finally {
      for (const pid of workers) if (running(pid)) process.kill(pid, 'SIGKILL');
    }
  }, 90_000);
});
