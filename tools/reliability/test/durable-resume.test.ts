import { describe, expect, it } from 'vitest';
import { report } from '../src/profile';
import { outputText, outputsOf } from './helpers';
import { readLog, runToEnd, runUntilKilled, restartFixtures } from './store-restart';

// Issue 44's first "done when", with durable cells (issue 43): a host process runs a turn whose
// cell makes 10 sequential nested calls of a tool that appends to a log, with a 300 ms timer pause
// between calls; the process is SIGKILLed midway (in a pause, after the 4th call); a new process —
// for NATS another agent host — opens the same store and session id: the cell completes, the log
// holds each call exactly once, the model's next request carries the cell's completion, and a value
// stored by an earlier cell loads. Code Mode's durable cells make it hold: the cell's journal is
// written to the store ahead of each nested call and the cell is restored from it.

const fixtures = restartFixtures('durable');

for (const kind of ['sqlite', 'nats'] as const) {
  describe(`a cell resumed from its journal after a SIGKILL (${kind === 'sqlite' ? 'SQLite file' : 'NATS JetStream, another agent host'})`, () => {
    it('completes: each nested call in the log exactly once, its completion in the next request, the stored value loads', async () => {
      const base = fixtures.config(kind, 'cell');
      // midway, in a timer pause: the 4th call's result is journaled well before the kill
      let fourthAt = 0;
      const atKill = await runUntilKilled(base, (lines) => {
        if (lines.length < 4) return false;
        fourthAt ||= Date.now();
        return Date.now() - fourthAt >= 100;
      });
      expect(atKill.length).toBeGreaterThanOrEqual(4);
      expect(atKill.length).toBeLessThan(10);
      const resumed = await runToEnd({ ...base, owner: 'agent-host-2', phase: 'second' });
      expect(readLog(base.log)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
      const carrying = resumed.requests.filter((input) => outputsOf(input, 'cell-1').some((item) => outputText(item).includes('appended 10')));
      expect(carrying.length).toBeGreaterThanOrEqual(1);
      expect(outputsOf(resumed.history, 'cell-1').filter((item) => outputText(item).includes('appended 10'))).toHaveLength(1);
      expect(resumed.loaded).toContain('4938');
      report('durable resume', `${kind}: killed after ${atKill.length} of 10 calls; the resumed cell completed with each call logged once`);
    }, 240_000);
  });
}
