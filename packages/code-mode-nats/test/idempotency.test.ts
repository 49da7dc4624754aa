import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CellObservation } from '@switchyard/protocol';
import { formatFrame, parseFrame } from '@switchyard/code-mode-runtime/protocol';
import { createNatsRuntime, type NatsRuntimeHost } from '../src/index';
import { frameTap } from '../src/agent-link';
import { countingHost, startDeploymentWithHost, stopDeploymentWithHost, type Deployment } from './helpers';
import { cellTexts, until, withoutTime } from '@switchyard/test-helpers';

let deployment: Deployment;
let host: NatsRuntimeHost;
beforeAll(async () => void ({ deployment, host } = await startDeploymentWithHost('keyed')), 60_000);
afterAll(() => stopDeploymentWithHost({ deployment, host }));
afterEach(() => {
  frameTap.incoming = undefined;
});

type Reply = { t: 'reply'; id: number; ok: boolean; value?: CellObservation };

/** Loses the first observation reply from the runtime host for which `wanted` holds (the frame's other messages pass); returns what it lost. */
function loseFirstReply(wanted: (observation: CellObservation) => boolean): Reply[] {
  const lost: Reply[] = [];
  frameTap.incoming = (frame) => {
    if (lost.length > 0) return frame;
    const messages = parseFrame(frame) as Array<{ t: string }>;
    const kept = messages.filter((message) => {
      const reply = message as Reply;
      if (lost.length > 0 || reply.t !== 'reply' || !reply.value || !wanted(reply.value)) return true;
      lost.push(reply);
      return false;
    });
    return kept.length > 0 ? formatFrame(kept) : undefined;
  };
  return lost;
}

const cellTool = (name: string) => ({ name, description: `${name}.`, kind: 'function' as const });

describe('idempotent cells over NATS', () => {
  it('a create whose reply was lost, retried with its key, answers with the original cell: same id, same observation, the source ran once', async () => {
    const lost = loseFirstReply((observation) => observation.kind === 'completed');
    // The tap applies to links opened from now on: this runtime's.
    const runtime = createNatsRuntime({ servers: deployment.server.url, auth: deployment.agentA, agentId: 'a' });
    let runs = 0;
    const counting = countingHost(() => ++runs);
    const session = runtime.openSession(counting.host);
    try {
      const source = `const n = await tools.count({}); text('run ' + n);`;
      const cancel = new AbortController();
      const first = session.createCell({ source, tools: [cellTool('count')], yieldTimeMs: 30_000, idempotencyKey: 'turn-1/call-1', signal: cancel.signal });
      await until(() => lost.length === 1, 'the lost reply', 60_000);
      cancel.abort();
      await expect(first).rejects.toMatchObject({ code: 'ABORTED', cellId: lost[0].value!.cellId });
      const retry = await session.createCell({ source, tools: [cellTool('count')], yieldTimeMs: 30_000, idempotencyKey: 'turn-1/call-1' });
      expect(retry.cellId).toBe(lost[0].value!.cellId);
      expect(withoutTime(retry.observation)).toEqual(withoutTime(lost[0].value!));
      expect(cellTexts(retry.observation)).toEqual(['run 1']);
      expect(runs).toBe(1);
      const next = await session.createCell({ source, tools: [cellTool('count')], yieldTimeMs: 30_000, idempotencyKey: 'turn-1/call-2' });
      expect(cellTexts(next.observation)).toEqual(['run 2']);
    } finally {
      await runtime.shutdown();
    }
  }, 120_000);

  it('an observation whose reply was lost is replayed once on retry with its key; the next observation starts after it', async () => {
    const lost = loseFirstReply((observation) => cellTexts(observation).includes('b'));
    const runtime = createNatsRuntime({ servers: deployment.server.url, auth: deployment.agentA, agentId: 'a' });
    const gates: Array<() => void> = [];
    const counting = countingHost(() => new Promise((resolve) => gates.push(() => resolve(null))));
    const session = runtime.openSession(counting.host);
    try {
      const created = await session.createCell({
        source: `text('a'); yield_control(); await tools.gate({}); text('b'); yield_control(); await tools.gate({}); text('c');`,
        tools: [cellTool('gate')],
        yieldTimeMs: 30_000,
        idempotencyKey: 'turn-1/exec',
      });
      expect(cellTexts(created.observation)).toEqual(['a']);
      const cancel = new AbortController();
      const waiting = session.observe(created.cellId, { yieldTimeMs: 30_000, idempotencyKey: 'turn-2/wait-1', signal: cancel.signal });
      await until(() => gates.length === 1, 'the first call at its gate', 60_000);
      gates[0]();
      await until(() => lost.length === 1, 'the lost reply', 60_000);
      cancel.abort();
      await expect(waiting).rejects.toMatchObject({ code: 'ABORTED' });
      const replayed = await session.observe(created.cellId, { yieldTimeMs: 30_000, idempotencyKey: 'turn-2/wait-1' });
      expect(withoutTime(replayed)).toEqual(withoutTime(lost[0].value!));
      expect(replayed).toMatchObject({ kind: 'yielded', items: [{ type: 'input_text', text: 'b' }] });
      const next = session.observe(created.cellId, { yieldTimeMs: 30_000, idempotencyKey: 'turn-2/wait-2' });
      await until(() => gates.length === 2, 'the second call at its gate', 60_000);
      gates[1]();
      const done = await next;
      expect(done).toMatchObject({ kind: 'completed' });
      expect(cellTexts(done)).toEqual(['c']);
    } finally {
      await runtime.shutdown();
    }
  }, 120_000);

  it('a terminate while the cell is still terminating answers "exec cell X is already terminating"; the session then runs a new cell', async () => {
    const runtime = createNatsRuntime({ servers: deployment.server.url, auth: deployment.agentA, agentId: 'a' });
    // A tool that never answers, even when aborted: the runtime's cleanup of the cell waits for it.
    const counting = countingHost(() => new Promise(() => {}));
    const session = runtime.openSession(counting.host);
    try {
      const created = await session.createCell({ source: `await tools.hang({});`, tools: [cellTool('hang')], yieldTimeMs: 200 });
      expect(created.observation).toMatchObject({ kind: 'yielded' });
      const terminating = session.terminate(created.cellId);
      await expect(session.terminate(created.cellId)).rejects.toMatchObject({
        code: 'RESPOND_TO_MODEL',
        message: `exec cell ${created.cellId} is already terminating`,
      });
      expect(await terminating).toMatchObject({ kind: 'terminated', cellId: created.cellId });
      const next = await session.createCell({ source: `text('fine')`, tools: [], yieldTimeMs: 30_000 });
      expect(cellTexts(next.observation)).toEqual(['fine']);
    } finally {
      await runtime.shutdown();
    }
  }, 120_000);
});
