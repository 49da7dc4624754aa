/**
 * Failover of durable cells across runtime hosts on a real nats-server: 3 runtime host processes
 * (cells in worker processes, as deployed), 12 sessions of one agent host each mid-cell (sequential
 * nested calls counted here, on the agent host), then the runtime host holding the most sessions is
 * SIGKILLed. Every cell it held is replayed on the other hosts from the journal the agent host
 * keeps: all 12 complete with their exact output (the values printed before the kill included),
 * each nested call ran once, and every session's next exec succeeds — also the exec started right
 * after the kill, before the agent host noticed it (its sticky placement still named the dead
 * host). A bus peer reading every frame sees no tool result, so the journals that travel for the
 * replays are sealed like any frame. Runtime hosts run in child processes; every wait is bounded.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createNatsRuntime, type NatsRuntime } from '@switchyard/code-mode-nats';
import type { CellHost, CellObservation, CellRuntimeEvent, CodeModeSession } from '@switchyard/protocol';
import { startNatsServer, type NatsServer } from '@switchyard/config/nats-server';
import { report } from '../src/profile';
import { spawnRuntimeHost } from './nats-runtime-host';
import { becomes } from '@switchyard/test-helpers';
import { errorOf } from './helpers';

const SESSIONS = 12;
const STEPS = 8;
/** Every tool result carries it: a bus peer must never see it in clear. */
const MARKER = `tool-secret-${randomBytes(6).toString('hex')}`;

let server: NatsServer;
let spy: NatsConnection;
let runtime: NatsRuntime | undefined;
const hosts = new Map<string, ChildProcess>();
const figures: string[] = [];

beforeAll(async () => {
  server = await startNatsServer();
  spy = await connect({ servers: server.url });
  // Started one after another: three workers starting at once on a loaded machine is the slow part.
  for (const name of ['fo1', 'fo2', 'fo3']) {
    const { host, hostId } = await spawnRuntimeHost({ servers: server.url, name, id: name, workers: { max: 2, prewarm: false } });
    hosts.set(hostId, host);
  }
}, 120_000);

afterAll(async () => {
  await runtime?.shutdown();
  for (const host of hosts.values()) host.kill('SIGKILL');
  await spy?.close();
  await server?.stop();
  report('nats failover', figures.join('; '));
});

const itemTexts = (observation: CellObservation) => observation.items.map((item) => (item as { text?: string }).text ?? JSON.stringify(item));

describe('NATS failover: a runtime host SIGKILLed while it holds running cells', () => {
  it('12 sessions mid-cell on 3 hosts, one host killed: all 12 cells complete exactly, each nested call ran once, every next exec succeeds', { timeout: 300_000 }, async () => {
    // The wire, as a bus peer sees it: which connections go to which runtime host, and every payload.
    const frames: Array<{ subject: string; data: Uint8Array; at: number }> = [];
    const connsOf = new Map<string, Set<string>>();
    spy.subscribe('switchyard.agent.failover.c.>', {
      callback: (_error, msg) => {
        const [runtimeId, conn] = msg.subject.split('.').slice(4);
        if (!connsOf.has(runtimeId!)) connsOf.set(runtimeId!, new Set());
        connsOf.get(runtimeId!)!.add(conn!);
      },
    });
    // Frames both ways, not the heartbeats: a subscriber on a ping subject would stand in for a dead
    // host (the server answers "no responders" only when nobody listens), delaying its detection.
    const tap = (_error: unknown, msg: { subject: string; data: Uint8Array }) => void frames.push({ subject: msg.subject, data: msg.data.slice(), at: Date.now() });
    spy.subscribe('switchyard.agent.>', { callback: tap });
    spy.subscribe('switchyard.rt.*.*.*', { callback: tap });
    await spy.flush();

    runtime = createNatsRuntime({ servers: server.url, agentId: 'failover', placement: { attempts: 20, timeoutMs: 10_000 } });
    const calls: string[] = [];
    const events: string[] = [];
    let killed = false;
    let resolveKill!: () => void;
    const afterKill = new Promise<void>((resolve) => (resolveKill = resolve));
    const sessions: CodeModeSession[] = [];
    for (let index = 0; index < SESSIONS; index++) {
      const host: CellHost = {
        invokeTool: async (request) => {
          const { who, i } = request.input as { who: string; i: number };
          calls.push(`${who}:${i}`);
          // The third call of every cell is still running on the agent host when its runtime host dies.
          if (i === 2 && !killed) await afterKill;
          return { i, note: MARKER };
        },
        notify: () => {},
        cellClosed: () => {},
        runtimeEvent: (event: CellRuntimeEvent) => {
          if (event.type === 'runtime-lost') events.push(`${index}:lost ${event.cellIds.length} ${event.cause}`);
          if (event.type === 'cell-resumed') events.push(`${index}:resumed ${event.alone ? 'alone' : 'together'}`);
        },
      };
      sessions.push(runtime.openSession(host));
    }
    const tools = [{ name: 'count', description: 'Records the call and returns its index.', kind: 'function' as const }];
    const source = (who: string) =>
      `const r = Math.random(), t = Date.now(); text('${who} before ' + r + ' ' + t); yield_control();
       const got = []; for (let i = 0; i < ${STEPS}; i++) got.push((await tools.count({ who: '${who}', i })).i);
       text('${who} after ' + r + ' ' + t + ' ' + got.join(','));`;
    const who = (index: number) => `s${index}`;
    const callsOf = (name: string) => calls.filter((entry) => entry.startsWith(`${name}:`)).map((entry) => Number(entry.split(':')[1]));

    // Each exec returns at its yield_control(): the model has seen the values before the kill.
    const firsts = await Promise.all(sessions.map((session, index) => session.createCell({ source: source(who(index)), tools, yieldTimeMs: 120_000 })));
    for (const first of firsts) expect(first.observation.kind, JSON.stringify(first.observation)).toBe('yielded');
    const waits = sessions.map((session, index) => session.observe(firsts[index]!.cellId, { yieldTimeMs: 240_000 }));
    expect(await becomes(() => sessions.every((_, index) => callsOf(who(index)).length === 3), 120_000), calls.join(' ')).toBe(true);

    // Kill the runtime host with the most sessions (at least 4 of 12 on 3 hosts).
    const [victim, victimConns] = [...connsOf].sort((a, b) => b[1].size - a[1].size)[0]!;
    expect(victimConns.size).toBeGreaterThanOrEqual(4);
    const connsBefore = victimConns.size;
    const killedAt = Date.now();
    hosts.get(victim)!.kill('SIGKILL');
    killed = true;
    // The next exec of every session, at once: those on the dead host go out before the agent host knows it is dead.
    const nexts = sessions.map((session, index) => session.createCell({ source: `text('${who(index)} next')`, tools: [], yieldTimeMs: 120_000 }));
    const lostSessions = () => new Set(events.filter((event) => event.includes(':lost')).map((event) => event.split(':')[0]));
    expect(await becomes(() => lostSessions().size >= connsBefore, 60_000), events.join('\n')).toBe(true);
    resolveKill();

    const ends = await Promise.all(waits);
    for (let index = 0; index < SESSIONS; index++) {
      const [value, time] = /before (\S+) (\S+)$/.exec(itemTexts(firsts[index]!.observation)[0]!)!.slice(1);
      expect(errorOf(ends[index]!), `${who(index)}: ${events.join(' | ')}`).toBeFalsy();
      // Exactly the output not seen yet: the "before" line is not emitted twice, the values are those printed before the kill.
      expect(itemTexts(ends[index]!)).toEqual([`${who(index)} after ${value} ${time} ${[...Array(STEPS).keys()].join(',')}`]);
      expect(callsOf(who(index))).toEqual([...Array(STEPS).keys()]);
    }
    const nextEnds = await Promise.all(nexts);
    for (let index = 0; index < SESSIONS; index++) {
      expect(errorOf(nextEnds[index]!.observation), who(index)).toBeFalsy();
      expect(itemTexts(nextEnds[index]!.observation)).toEqual([`${who(index)} next`]);
    }
    // And the exec after that, once everything settled: placed on a live host too.
    const thirds = await Promise.all(sessions.map((session, index) => session.createCell({ source: `text('${who(index)} third')`, tools: [], yieldTimeMs: 120_000 })));
    for (let index = 0; index < SESSIONS; index++) expect(itemTexts(thirds[index]!.observation)).toEqual([`${who(index)} third`]);

    // The sessions that lost their host: each heard the loss once, naming the dead host, and each of its cells was resumed.
    const lost = events.filter((event) => event.includes(':lost'));
    expect(lost.length).toBe(lostSessions().size);
    for (const event of lost) expect(event).toMatch(/^\d+:lost [12] runtime host fo\d is gone \(its NATS subscription ended\)$/);
    const resumedCells = events.filter((event) => event.endsWith(':resumed together')).length;
    expect(resumedCells).toBe(lost.reduce((sum, event) => sum + Number(/:lost (\d)/.exec(event)![1]), 0));
    expect(events.some((event) => event.includes('alone'))).toBe(false);
    // No connection to the dead host was opened after its death: every replay and every next exec went elsewhere.
    expect(connsOf.get(victim)!.size).toBe(connsBefore);
    // Sealed: the journals that travelled for the replays (tool results inside) are never in clear on the bus.
    const replayFrames = frames.filter((frame) => frame.at >= killedAt && frame.subject.startsWith('switchyard.rt.') && !frame.subject.startsWith(`switchyard.rt.${victim}.`));
    expect(replayFrames.length).toBeGreaterThan(0);
    const clear = frames.filter((frame) => Buffer.from(frame.data).includes(MARKER));
    expect(clear.map((frame) => frame.subject)).toEqual([]);
    figures.push(
      `3 runtime hosts, 12 sessions mid-cell, host ${victim} (${connsBefore} sessions) SIGKILLed: 12/12 cells exact, ${calls.length} nested calls for ${SESSIONS * STEPS} (each once), ${resumedCells} cells replayed, 12/12 next execs and 12/12 after them succeeded, ${frames.length} frames on the bus, none in clear`,
    );
  });
});
