import { afterAll, describe, expect, it } from 'vitest';
import { report } from '../src/profile';
import { runHostProcess } from './host-process';

// One session attacks (each attack from the runtime-boundary review, plus six busy cells) while two
// bystander sessions of the same host, all with default options, each hold a running cell with a
// pending store, a stored value, and run a short exec every 300 ms. Each attack runs in its own host
// process (a child of this test, killed after 240 s), one at a time. No bystander may lose a cell or
// a stored value, its execs must answer within 2 s (on a loaded machine the bound grows with the
// load per CPU, and the figure is reported), and the host's peak RSS must stay under 1.5 GB.
const HOST_TIMEOUT_MS = 240_000;

interface Bystander {
  stored: string;
  running: string;
  ended: { status: string; output: string[]; error?: string };
  loaded: string;
  probes: number;
  maxLatencyMs: number;
  failures: string[];
}

interface Report {
  attack: string;
  attacker: { cells: Array<{ status: string; output?: string[]; error?: string }>; after: { status: string; output: string[]; error?: string } };
  events: string[];
  b: Bystander;
  c: Bystander;
  peakRssMb: number;
}

const runAttackHost = (attack: string) => runHostProcess<Report>('session-isolation-host.ts', [attack], HOST_TIMEOUT_MS);

const figures: string[] = [];
afterAll(() => report('session isolation', figures.join('\n')));

/** What the attacker's own cells may end with: a failure naming a limit or the crash, or (busy cells) terminated. */
const ATTACKER_END: Record<string, RegExp> = {
  // A crash while nobody waits on the cell: a later wait finds no cell; the host heard the cause (runtime-lost).
  'v8-fatal': /^exec (runtime ended unexpectedly: the runtime worker (crashed|exceeded|stopped)|cell exceeded its CPU time limit)|^exec cell \w+ not found$/,
  // Each cell's own writes (64 MB) pass the session's budget (32 MiB): they must never leave its isolate.
  'stored-flood': /^exec stored values budget exceeded: this cell's writes passed 33554432 bytes \(maxStoredBytes\); none of its writes were stored, earlier values are unchanged$/,
  'stored-bricking': /^exec (runtime ended unexpectedly|stored values budget exceeded|cell exceeded its CPU time limit)|^exec cell \w+ not found$/,
  'result-flood': /./,
  'busy-cells': /./,
};

describe('one session cannot cost another a cell, a value or its latency (default options)', { timeout: HOST_TIMEOUT_MS + 30_000 }, () => {
  for (const attack of Object.keys(ATTACKER_END)) {
    it(attack, async () => {
      const { code, report: result, stderr, loadPerCpu } = await runAttackHost(attack);
      expect(result, `host exited ${code}: ${stderr}`).toBeDefined();
      const { b, c, attacker, peakRssMb } = result!;
      // On a machine loaded beyond its CPUs by others, latency grows with the load; the figure is reported.
      const latencyBound = 2_000 * Math.max(1, loadPerCpu);
      figures.push(`${attack}: bystander max exec latency ${b.maxLatencyMs} / ${c.maxLatencyMs} ms (bound ${Math.round(latencyBound)} ms at load ${loadPerCpu.toFixed(1)} per CPU), host peak RSS ${peakRssMb} MB, attacker ${JSON.stringify(attacker.cells.map((cell) => cell.error ?? cell.status)).slice(0, 300)}`);
      for (const [name, bystander] of [['b', b], ['c', c]] as const) {
        expect(bystander.failures, name).toEqual([]);
        expect(bystander.running, name).toBe('running');
        expect(bystander.ended, name).toEqual({ status: 'completed', output: ['done'] });
        expect(bystander.loaded, name).toBe(JSON.stringify([name, `${name}-late`]));
        expect(bystander.probes, name).toBeGreaterThan(3);
        expect(bystander.maxLatencyMs, name).toBeLessThan(latencyBound);
      }
      expect(peakRssMb).toBeLessThan(1_536);
      // The attacker's session still runs cells afterwards (its stored values did not brick it).
      expect(attacker.after).toEqual({ status: 'completed', output: ['true', 'a-alive'] });
      if (attack === 'v8-fatal' && attacker.cells[0]!.error?.endsWith('not found')) {
        expect(result!.events.some((event) => /^runtime-lost: the runtime worker (crashed with SIG\w+|exceeded its memory limit)/.test(event)), JSON.stringify(result!.events)).toBe(true);
      }
      if (attack !== 'result-flood' && attack !== 'busy-cells') {
        for (const cell of attacker.cells) expect(cell.error ?? '').toMatch(ATTACKER_END[attack]!);
      }
      if (attack === 'busy-cells') expect(attacker.cells.map((cell) => cell.status)).toEqual(Array(6).fill('terminated'));
    });
  }
});
