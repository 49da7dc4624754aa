import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCodeMode } from '@switchyard/code-mode';
import type { ResponseItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession, type Session } from '@switchyard/session';
import { createNatsRuntime } from '../src/index';
import { startDeployment, startHost, type Deployment, type HostProcess } from './helpers';
import { outputText } from '@switchyard/test-helpers';

/**
 * The fleet scenario: 200 agent sessions, each through the host facade (one loop: the session's
 * own router runs every nested call), each running a cell of 20 nested calls, spread over three
 * runtime hosts in their own processes; one host is SIGKILLed in the middle. Every exec answers
 * exactly once and completes: the cells of sessions on the dead host are replayed on the live hosts
 * from the journals the agent host keeps; those sessions' next cell runs on a live host and reads
 * the value committed before; no nested call runs twice (counted here, on the agent host, by a key
 * each call carries).
 */
const SESSIONS = 200;
const CALLS = 20;

let deployment: Deployment;
let hosts: HostProcess[] = [];
beforeAll(async () => {
  deployment = await startDeployment();
  hosts = await Promise.all(['h1', 'h2', 'h3'].map((name) => startHost(deployment.server.url, { nkeySeed: deployment.runtimeSeed }, name)));
}, 180_000);
afterAll(async () => {
  await Promise.all(hosts.map((host) => host.stop()));
  await deployment?.server.stop();
});

describe('three runtime hosts behind NATS, one SIGKILLed mid-run', () => {
  it('answers every exec once, replays the dead host\'s cells on the others, re-places their next cell, never runs a nested call twice', async () => {
    const counts = new Map<string, number>();
    let total = 0;
    let reachedKill!: () => void;
    const killPoint = new Promise<void>((resolve) => (reachedKill = resolve));
    const count = defineFunctionTool({
      name: 'count',
      description: 'Counts a call by its key.',
      parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
      supportsParallelToolCalls: true,
      async handle({ args }) {
        const key = (args as { key: string }).key;
        counts.set(key, (counts.get(key) ?? 0) + 1);
        if (++total === Math.floor((SESSIONS * CALLS) / 3)) reachedKill();
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { key };
      },
    });
    const runtime = createNatsRuntime({
      servers: deployment.server.url,
      auth: deployment.agentA,
      agentId: 'a',
      heartbeat: { intervalMs: 250, timeoutMs: 30_000 },
      placement: { timeoutMs: 20_000 },
    });
    const codeMode = createCodeMode({ runtime, defaultYieldTimeMs: 100_000 });
    const sessions: Session[] = Array.from({ length: SESSIONS }, (_, n) =>
      createSession({ toolMode: 'code-mode-only', tools: [count], codeMode, sessionId: `s${n}` }),
    );
    // Cell events reach every session of the Code Mode service: keyed by cell id, the exec that made it names the session.
    const execOf = new Map<string, string>();
    const lostCells = new Map<string, string>();
    const resumedCells = new Set<string>();
    for (const session of sessions) {
      session.on('cell-start', (event) => void execOf.set(event.cellId, event.execCallId ?? ''));
      session.on('runtime-lost', (event) => event.cellIds.forEach((cellId) => lostCells.set(cellId, event.cause)));
      session.on('cell-resumed', (event) => void resumedCells.add(event.cellId));
    }
    let answers = 0;
    const exec = async (session: Session, callId: string, source: string): Promise<string> => {
      const step = await session.beginTurn().step();
      const item = await step.dispatch({ type: 'custom_tool_call', call_id: callId, name: 'exec', input: source });
      answers++;
      expect((item as { call_id: string }).call_id).toBe(callId);
      return outputText(item);
    };
    try {
      // 1. A committed value per session (this cell completes before anything dies).
      const stored = await Promise.all(sessions.map((session, n) => exec(session, `store-${n}`, `store('v', ${n}); text('stored');`)));
      for (const text of stored) expect(text).toMatch(/^Script completed[\s\S]*stored/);

      // 2. 20 sequential nested calls per session, all sessions at once; a host dies in the middle.
      const main = sessions.map((session, n) =>
        exec(session, `main-${n}`, `for (let i = 0; i < ${CALLS}; i++) await tools.count({ key: 's${n}-main-' + i }); text('done ' + load('v'));`),
      );
      await killPoint;
      const victim = hosts[1];
      victim.child.kill('SIGKILL');
      expect((await victim.exited).signal).toBe('SIGKILL');
      const results = await Promise.all(main);
      expect(answers).toBe(SESSIONS * 2);

      results.forEach((text, n) => {
        expect(text, `s${n}`).toMatch(new RegExp(`^Script completed[\\s\\S]*done ${n}$`));
        for (let i = 0; i < CALLS; i++) expect(counts.get(`s${n}-main-${i}`)).toBe(1);
      });
      // The dead host held about a third of the sessions: each heard the loss and had its cell replayed.
      const failed = [...lostCells.keys()].map((cellId) => Number(/^main-(\d+)$/.exec(execOf.get(cellId) ?? '')![1]));
      expect(failed.length).toBeGreaterThan(0);
      expect(failed.length).toBeLessThan(SESSIONS);
      expect(new Set(failed).size).toBe(failed.length);
      for (const cause of lostCells.values()) expect(cause).toMatch(/^(runtime host h2 is gone \(its NATS subscription ended\)|runtime host h2 closed the connection|the connection to runtime host h2 closed)/);
      expect([...resumedCells].sort()).toEqual([...lostCells.keys()].sort());

      // 3. The next cell of each failed session runs on a live host and reads the committed value.
      const again = await Promise.all(failed.map((n) => exec(sessions[n], `again-${n}`, `await tools.count({ key: 's${n}-again' }); text('again ' + load('v'));`)));
      again.forEach((text, index) => expect(text).toMatch(new RegExp(`^Script completed[\\s\\S]*again ${failed[index]}$`)));
      expect(answers).toBe(SESSIONS * 2 + failed.length);

      // No nested call ran twice: every key was counted once (the replays joined the calls in flight).
      for (const [key, n] of counts) expect(n, key).toBe(1);
      for (const n of failed) expect(counts.get(`s${n}-again`)).toBe(1);
    } finally {
      await Promise.all(sessions.map((session) => session.shutdown()));
      await codeMode.shutdown();
      await runtime.shutdown();
    }
  }, 150_000);
});
