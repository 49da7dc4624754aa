import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { CellObservation, CodeModeSession } from '@switchyard/protocol';
import { createRemoteRuntime } from './process-runtime';
import type { RuntimePlacement } from './remote-session';
import { connectRuntime } from './runtime-client';
import { createStreamTransport, formatFrame, parseFrame, type RuntimeMessage, type RuntimeTransport } from './protocol';
import { createTestHost, fnDescriptor, rejection, until } from '../test/helpers';
import { cellTexts, withoutTime } from '@switchyard/test-helpers';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

type Reply = Extract<RuntimeMessage, { t: 'reply' }>;

/**
 * A placement onto one real worker process (`src/worker.ts`, as the pool starts it from source)
 * whose replies pass `drop` first: a reply it returns true for never reaches the host, as if the
 * frame carrying it had been lost on the way.
 */
function droppingWorker(drop: (reply: Reply) => boolean) {
  const children: ChildProcess[] = [];
  const dropped: Reply[] = [];
  const placement: RuntimePlacement = {
    async acquire(sink) {
      const child = spawn(process.execPath, ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', 'tsx', join(packageRoot, 'src', 'worker.ts')], {
        cwd: packageRoot,
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      children.push(child);
      const stream = createStreamTransport({ readable: child.stdout!, writable: child.stdin! });
      const transport: RuntimeTransport = {
        ...stream,
        onFrame(listener) {
          stream.onFrame((frame) => {
            const messages = parseFrame(frame) as RuntimeMessage[];
            const kept = messages.filter((message) => {
              if (message.t !== 'reply' || !drop(message)) return true;
              dropped.push(message);
              return false;
            });
            if (kept.length > 0) listener(formatFrame(kept));
          });
        },
      };
      const client = await connectRuntime({ transport, onEvent: (message) => sink.onEvent(message), onLost: (cause) => sink.onLost(cause) });
      return { client, key: `s${children.length}`, hold: () => () => {}, release: () => {} };
    },
  };
  const stop = () => {
    for (const child of children) child.kill('SIGKILL');
  };
  return { placement, dropped, stop };
}

/** The first observation reply for which `wanted` holds is dropped; later ones pass. */
function dropFirst(wanted: (observation: CellObservation) => boolean) {
  let done = false;
  return (reply: Reply) => {
    if (done || !reply.ok || !reply.value || !wanted(reply.value)) return false;
    done = true;
    return true;
  };
}


let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

function workerSession(drop: (reply: Reply) => boolean) {
  let runs = 0;
  const gates: Array<() => void> = [];
  const recorder = createTestHost({
    count: () => ++runs,
    gate: () => new Promise((resolve) => gates.push(() => resolve(null))),
  });
  const worker = droppingWorker(drop);
  const runtime = createRemoteRuntime({ placement: worker.placement });
  cleanup.push(() => runtime.shutdown(), () => worker.stop());
  const session: CodeModeSession = runtime.openSession(recorder.host);
  return { session, worker, gates, runs: () => runs };
}

describe('idempotent creation over a worker process', () => {
  it('a create whose reply was lost, retried with its key, answers with the original cell: same id, same observation, the source ran once', async () => {
    const { session, worker, runs } = workerSession(dropFirst((observation) => observation.kind === 'completed'));
    const source = `const n = await tools.count({}); text('run ' + n);`;
    const cancel = new AbortController();
    const first = session.createCell({ source, tools: [fnDescriptor('count')], yieldTimeMs: 10_000, idempotencyKey: 'turn-1/call-1', signal: cancel.signal });
    await until(() => worker.dropped.length === 1, 'the lost reply', 60_000);
    // The reply is gone: the caller gives up on the first call and retries it under the same key.
    cancel.abort();
    const lost = worker.dropped[0] as Extract<Reply, { ok: true }>;
    await expect(first).rejects.toMatchObject({ code: 'ABORTED', cellId: lost.value!.cellId });
    const retry = await session.createCell({ source, tools: [fnDescriptor('count')], yieldTimeMs: 10_000, idempotencyKey: 'turn-1/call-1' });
    expect(retry.cellId).toBe(lost.value!.cellId);
    expect(withoutTime(retry.observation)).toEqual(withoutTime(lost.value!));
    expect(cellTexts(retry.observation)).toEqual(['run 1']);
    expect(runs()).toBe(1);
    // A second retry repeats the answer again; a new key is a new cell.
    expect(cellTexts((await session.createCell({ source, tools: [fnDescriptor('count')], yieldTimeMs: 10_000, idempotencyKey: 'turn-1/call-1' })).observation)).toEqual(['run 1']);
    const next = await session.createCell({ source, tools: [fnDescriptor('count')], yieldTimeMs: 10_000, idempotencyKey: 'turn-1/call-2' });
    expect(next.cellId).not.toBe(retry.cellId);
    expect(cellTexts(next.observation)).toEqual(['run 2']);
    expect(runs()).toBe(2);
  }, 120_000);

  it('an observation whose reply was lost is replayed once on retry with its key; the next observation starts after it', async () => {
    const { session, worker, gates } = workerSession(dropFirst((observation) => observation.items.some((item) => item.type === 'input_text' && item.text === 'b')));
    const created = await session.createCell({
      source: `text('a'); yield_control(); await tools.gate({}); text('b'); yield_control(); await tools.gate({}); text('c');`,
      tools: [fnDescriptor('gate')],
      yieldTimeMs: 10_000,
      idempotencyKey: 'turn-1/exec',
    });
    expect(cellTexts(created.observation)).toEqual(['a']);
    const cancel = new AbortController();
    const waiting = session.observe(created.cellId, { yieldTimeMs: 30_000, idempotencyKey: 'turn-2/wait-1', signal: cancel.signal });
    await until(() => gates.length === 1, 'the first call at its gate', 60_000);
    gates[0]();
    await until(() => worker.dropped.length === 1, 'the lost reply', 60_000);
    cancel.abort();
    expect(await rejection(waiting)).toMatchObject({ code: 'ABORTED' });
    const replayed = await session.observe(created.cellId, { yieldTimeMs: 30_000, idempotencyKey: 'turn-2/wait-1' });
    expect(replayed).toMatchObject({ kind: 'yielded', cellId: created.cellId });
    expect(cellTexts(replayed)).toEqual(['b']);
    expect(withoutTime(replayed)).toEqual(withoutTime((worker.dropped[0] as Extract<Reply, { ok: true }>).value!));
    // A new key observes afresh: the output after the replayed one, never 'b' a second time.
    const next = session.observe(created.cellId, { yieldTimeMs: 30_000, idempotencyKey: 'turn-2/wait-2' });
    await until(() => gates.length === 2, 'the second call at its gate', 60_000);
    gates[1]();
    const done = await next;
    expect(done).toMatchObject({ kind: 'completed' });
    expect(cellTexts(done)).toEqual(['c']);
    // The cell has closed; a retry of the last observation still gets its answer.
    expect(cellTexts(await session.observe(created.cellId, { yieldTimeMs: 0, idempotencyKey: 'turn-2/wait-2' }))).toEqual(['c']);
    await expect(session.observe(created.cellId, { yieldTimeMs: 0, idempotencyKey: 'turn-2/wait-3' })).rejects.toMatchObject({ code: 'CELL_NOT_FOUND' });
  }, 120_000);
});

