import { describe, expect, it } from 'vitest';
import { report } from '../src/profile';
import { outputText, outputsOf } from './helpers';
import { runToEnd, runUntilKilled, restartFixtures } from './store-restart';

// A session whose host is SIGKILLed mid-turn, resumed by a new process from its store (a SQLite
// file; NATS JetStream with the second process another agent host). What must hold without durable
// cells: the stored value loads, the call the kill interrupted is answered as interrupted, the
// `exec_command` process that died with the host is reported lost to the model once, and the
// session goes on.

const fixtures = restartFixtures('restart');

for (const kind of ['sqlite', 'nats'] as const) {
  describe(`a host SIGKILLed mid-turn, resumed from ${kind === 'sqlite' ? 'a SQLite file' : 'NATS JetStream by another agent host'}`, () => {
    it('the stored value loads, the interrupted call is closed, the lost process is reported once, the next turn runs', async () => {
      const base = fixtures.config(kind, 'tool');
      const atKill = await runUntilKilled(base, (lines) => lines.length >= 1);
      expect(atKill).toEqual(['1']);
      const resumed = await runToEnd({ ...base, owner: 'agent-host-2', phase: 'second' });
      // the direct call the kill interrupted: answered once, as interrupted
      expect(outputsOf(resumed.history, 'hang-1').map(outputText)).toEqual(['the conversation was interrupted before this call finished']);
      // the process that died with the host: reported once, in the wake turn's request
      const lostReports = resumed.requests.flatMap((input) => outputsOf(input, 'sleep-1').map(outputText).filter((text) => text.includes('was lost')));
      expect(lostReports[0]).toMatch(/^Process \d+ was lost: the host restarted while it was running `sleep 20 # switchyard-restart-/);
      expect(outputsOf(resumed.history, 'sleep-1').filter((item) => outputText(item).includes('was lost'))).toHaveLength(1);
      // the value a cell stored before the kill
      expect(resumed.loaded).toContain('4938');
      report('session store restart', `${kind}: killed with the log at ${atKill.length} line(s); resumed by another process: value loaded, the interrupted call closed, the lost process reported once`);
    }, 240_000);
  });
}
