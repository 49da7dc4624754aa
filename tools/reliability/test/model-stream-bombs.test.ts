// A hostile model server on 127.0.0.1 (this process) against the OpenAI clients in child processes,
// with the clients' default limits: an endless HTTP 500 body, endless argument deltas spread over 16
// items, and a stream of only keep-alives. Each ends with a MODEL_ERROR naming the bound, the
// child's peak RSS stays far below what the server sent, and each child is killed after 60 s at most.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { report } from '../src/profile';

const CLIENT = fileURLToPath(new URL('./fixtures/model-stream-client.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

type Mode = 'error-500' | 'argument-deltas' | 'keep-alives';
let server: Server;
let base = '';
const written = new Map<string, number>();

/** Writes `chunk` (from `make(index)`) until the client goes away, honouring backpressure. */
function endless(mode: Mode, kind: string, response: import('node:http').ServerResponse): void {
  let open = true;
  let index = 0;
  response.on('close', () => (open = false));
  const make = (i: number): string => {
    if (mode === 'error-500') return 'x'.repeat(65_536);
    if (mode === 'keep-alives') return ': keep-alive\n\n';
    const item = i % 16;
    return kind === 'chat'
      ? `data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { tool_calls: [{ index: item, id: `call_${item}`, function: { name: 'f', arguments: 'x'.repeat(16_384) } }] } }] })}\n\n`
      : `data: ${JSON.stringify({ type: 'response.function_call_arguments.delta', item_id: `fc_${item}`, delta: 'x'.repeat(16_384) })}\n\n`;
  };
  const pump = async () => {
    while (open) {
      const chunk = make(index++);
      written.set(`${mode}/${kind}`, (written.get(`${mode}/${kind}`) ?? 0) + chunk.length);
      if (!response.write(chunk)) await new Promise((resolve) => response.once('drain', resolve).once('close', resolve));
      if (mode === 'keep-alives') await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  void pump();
}

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    const [, mode, kind] = /^\/([^/]+)\/([^/]+)\//.exec(request.url ?? '') ?? [];
    response.writeHead(mode === 'error-500' ? 500 : 200, { 'content-type': mode === 'error-500' ? 'text/plain' : 'text/event-stream' });
    endless(mode as Mode, kind, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

function runClient(kind: string, mode: Mode, limits?: object): Promise<{ code: string; message: string; retryable: boolean; ms: number; peakRssMb: number }> {
  return new Promise((resolve, reject) => {
    const args = ['--conditions=@switchyard/source', '--import', 'tsx', CLIENT, kind, `${base}/${mode}/${kind}/v1`];
    if (limits) args.push(JSON.stringify(limits));
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('close', () => {
      clearTimeout(kill);
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1) ?? ''));
      } catch {
        reject(new Error(`client printed no result: ${out} ${err}`));
      }
    });
  });
}

describe.each(['responses', 'chat'])('the %s client against a hostile model server (default limits)', (kind) => {
  it('an endless HTTP 500 body: the error reports the status after reading 64 KiB', async () => {
    const result = await runClient(kind, 'error-500');
    report(`model stream ${kind} endless 500 body`, JSON.stringify(result));
    expect(result).toMatchObject({ code: 'MODEL_ERROR' });
    expect(result.message).toMatch(/^model request failed \(HTTP 500\): x+$/);
    expect(result.message.length).toBeLessThan(1000);
    expect(result.peakRssMb).toBeLessThan(400);
  }, 90_000);

  it('endless argument deltas over 16 items: maxResponseChars (32 Mi) ends it, RSS bounded', async () => {
    const result = await runClient(kind, 'argument-deltas');
    report(`model stream ${kind} endless argument deltas`, JSON.stringify({ ...result, serverSentMb: Math.round((written.get(`argument-deltas/${kind}`) ?? 0) / 2 ** 20) }));
    expect(result).toMatchObject({ code: 'MODEL_ERROR', retryable: false, message: 'model stream exceeded maxResponseChars (33554432 characters in one response)' });
    expect(result.peakRssMb).toBeLessThan(800);
  }, 90_000);

  it('only keep-alives: the idle timeout ends it although bytes keep coming', async () => {
    const result = await runClient(kind, 'keep-alives', { idleTimeoutMs: 2000 });
    report(`model stream ${kind} only keep-alives`, JSON.stringify(result));
    expect(result).toMatchObject({ code: 'MODEL_ERROR', retryable: true, message: 'model stream idle for idleTimeoutMs (2000 ms) without an event' });
    expect(result.ms).toBeGreaterThanOrEqual(1900);
    expect(result.ms).toBeLessThan(40_000);
  }, 90_000);
});
