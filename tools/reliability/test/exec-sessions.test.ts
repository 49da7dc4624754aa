import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execTools } from '@switchyard/tool-exec';
import { report } from '../src/profile';
import { callItem, execSessionIdOf, openHarness, outputText, type Harness } from './helpers';

// One execTools() toolset shared by two sessions of one host (a server, `mcp serve`), each with
// the default options (workspace-write sandbox, processes scoped to their turn), through the real
// stack: session → router → registry → tool-exec → bubblewrap. Bob attacks Alice's tty shell.
const scratch = mkdtempSync(join(tmpdir(), 'reliability-exec-sessions-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const held: string[] = [];
afterAll(() => report('exec sessions', `${held.length} cross-session attacks failed:\n  - ${held.join('\n  - ')}`));


describe('exec sessions: a shared toolset shares no processes', () => {
  it("Bob cannot read, write or kill Alice's tty shell; Alice keeps working after Bob's session ends", async () => {
    const root = join(scratch, 'ws');
    mkdirSync(root);
    const exec = execTools({ root, approvalPolicy: 'never', shell: '/bin/sh' });
    const open = () => openHarness({ toolMode: 'direct', cwd: root, tools: [...exec] });
    const alice: Harness = await open();
    let bob: Harness | undefined = await open();
    try {
      const shell = await alice.step.dispatch(callItem('a1', 'exec_command', { cmd: 'sh', tty: true, yield_time_ms: 1_000 }));
      const id = execSessionIdOf(shell);
      expect(id).toBeGreaterThan(0);
      const typed = await alice.step.dispatch(callItem('a2', 'write_stdin', { session_id: id, chars: 'ALICE_TOKEN=alice-secret-42\n', yield_time_ms: 500 }));
      expect(outputText(typed)).toContain('ALICE_TOKEN');

      // A number nobody was given, then Alice's: the same answer (only the number differs).
      const never = await bob.step.dispatch(callItem('b0', 'write_stdin', { session_id: 424_242, chars: '' }));
      expect(outputText(never)).toBe('write_stdin failed: Unknown process id 424242');
      const read = await bob.step.dispatch(callItem('b1', 'write_stdin', { session_id: id, chars: '', yield_time_ms: 5_000 }));
      expect(outputText(read)).toBe(`write_stdin failed: Unknown process id ${id}`);
      const marker = join(root, 'bob-was-here');
      const written = await bob.step.dispatch(callItem('b2', 'write_stdin', { session_id: id, chars: `echo "$ALICE_TOKEN" > ${marker}\n`, yield_time_ms: 500 }));
      expect(outputText(written)).toBe(`write_stdin failed: Unknown process id ${id}`);
      const interrupted = await bob.step.dispatch(callItem('b3', 'write_stdin', { session_id: id, chars: '\u0003exit\n', yield_time_ms: 500 }));
      expect(outputText(interrupted)).toBe(`write_stdin failed: Unknown process id ${id}`);
      // Bob's own process, then Bob's session ends (its turn, then the session's dispose).
      const own = await bob.step.dispatch(callItem('b4', 'exec_command', { cmd: 'sh', tty: true, yield_time_ms: 500 }));
      expect(execSessionIdOf(own)).not.toBe(id);
      await bob.close();
      bob = undefined;
      expect(exec.liveSessionIds()).toEqual([id]);

      // Alice's shell is alive, kept her variable, and ran none of Bob's input.
      const echoed = await alice.step.dispatch(callItem('a3', 'write_stdin', { session_id: id, chars: 'echo "token=$ALICE_TOKEN"\n', yield_time_ms: 1_000 }));
      expect(outputText(echoed)).toContain('token=alice-secret-42');
      expect(outputText(echoed)).toContain(`Process running with session ID ${id}`);
      expect(existsSync(marker)).toBe(false);
      const later = await alice.step.dispatch(callItem('a4', 'exec_command', { cmd: 'echo later', yield_time_ms: 5_000 }));
      expect(outputText(later)).toMatch(/Process exited with code 0\nOriginal token count: 2\nOutput:\nlater\n$/);
      held.push(`Bob's write_stdin(${id}) read nothing, wrote nothing, interrupted nothing: "Unknown process id", as for a number never handed out`);
      held.push("Bob's session end left Alice's tty shell and her later exec_command working");
    } finally {
      await bob?.close();
      await alice.close();
      await exec.shutdown();
    }
  });

  it("with processScope 'session', a session's shutdown ends its own processes and no one else's", async () => {
    const root = join(scratch, 'ws-session-scope');
    mkdirSync(root);
    const exec = execTools({ root, approvalPolicy: 'never', shell: '/bin/sh', processScope: 'session' });
    const open = () => openHarness({ toolMode: 'direct', cwd: root, tools: [...exec] });
    const alice: Harness = await open();
    const bob: Harness = await open();
    try {
      const aliceShell = execSessionIdOf(await alice.step.dispatch(callItem('a1', 'exec_command', { cmd: 'sh', tty: true, yield_time_ms: 500 })));
      const bobShell = execSessionIdOf(await bob.step.dispatch(callItem('b1', 'exec_command', { cmd: 'sh', tty: true, yield_time_ms: 500 })));
      expect(exec.liveSessionIds().sort()).toEqual([aliceShell, bobShell].sort());
      await bob.close();
      // Bob's session said who it is when it ended: only his shell is gone
      expect(exec.liveSessionIds()).toEqual([aliceShell]);
      const echoed = await alice.step.dispatch(callItem('a2', 'write_stdin', { session_id: aliceShell, chars: 'echo still-here\n', yield_time_ms: 1_000 }));
      expect(outputText(echoed)).toContain('still-here');
      held.push("processScope 'session': Bob's shutdown ended Bob's shell only; Alice's shell answered after it");
    } finally {
      await alice.close();
      await exec.shutdown();
    }
  });
});
