import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHookEngine } from '@switchyard/hooks';
import { execTools } from '@switchyard/tool-exec';
import { report } from '../src/profile';
import { callItem, openHarness, outputText, type Harness } from './helpers';

// Hooks see what will run: input typed into a tty shell over several write_stdin calls reaches a
// PreToolUse hook as the assembled line, through the real stack (session → registry → hooks with
// real /bin/sh hook processes → tool-exec → a tty `sh`).
const scratch = mkdtempSync(join(tmpdir(), 'reliability-stdin-hooks-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const held: string[] = [];
afterAll(() => report('exec stdin hooks', `${held.length} split writes failed to pass the hook:\n  - ${held.join('\n  - ')}`));

/** A hook refusing anything whose stdin mentions `rm -rf` (exit 2, reason on stderr). */
const NO_RM = 'grep -q "rm -rf" && { echo "no rm -rf" >&2; exit 2; } || exit 0';


let counter = 0;
async function shellSession(): Promise<{ harness: Harness; victim: string; id: number; type(chars: string): Promise<string>; close(): Promise<void> }> {
  const root = join(scratch, `ws-${++counter}`);
  mkdirSync(join(root, 'victim'), { recursive: true });
  writeFileSync(join(root, 'victim', 'keep.txt'), 'precious');
  const exec = execTools({ root, sandbox: 'danger-full-access', approvalPolicy: 'never', shell: '/bin/sh' });
  const hooks = createHookEngine({ shell: '/bin/sh', config: { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: NO_RM, timeout: 30 }] }] } } });
  const harness = await openHarness({ toolMode: 'direct', cwd: root, tools: [...exec], hooks });
  const started = await harness.step.dispatch(callItem('start', 'exec_command', { cmd: 'sh', tty: true, yield_time_ms: 500 }));
  const id = Number(/session ID (\d+)/.exec(outputText(started))?.[1]);
  let call = 0;
  return {
    harness,
    victim: join(root, 'victim', 'keep.txt'),
    id,
    type: async (chars) => outputText(await harness.step.dispatch(callItem(`w${++call}`, 'write_stdin', { session_id: id, chars, yield_time_ms: 700 }))),
    close: async () => (await harness.close(), await exec.shutdown()),
  };
}

const BLOCKED = 'Tool call blocked by PreToolUse hook: no rm -rf. Tool: write_stdin';

describe('exec stdin hooks: a split write is hooked whole', () => {
  const splits: Array<[string, string[]]> = [
    ['"rm -r" then "f victim\\n"', ['rm -r', 'f victim\n']],
    ['"rm -rX" then DEL + "f victim\\n"', ['rm -rX', '\x7ff victim\n']],
    ['"rm -" "r" "f victim" "\\n"', ['rm -', 'r', 'f victim', '\n']],
  ];
  for (const [name, writes] of splits) {
    it(`${name}: the write that completes "rm -rf" is blocked; the file survives`, async () => {
      const shell = await shellSession();
      try {
        expect(shell.id).toBeGreaterThan(0);
        const answers: string[] = [];
        // Typing stops at the first refusal (what follows would be another command).
        for (const chars of writes) if (!answers.includes(BLOCKED)) answers.push(await shell.type(chars));
        expect(answers.filter((answer) => answer === BLOCKED).length).toBeGreaterThan(0);
        // Clear whatever is left on the line, then harmless input still runs.
        // (^C flushes the terminal's input queue: the next line goes in its own write.)
        await shell.type('\x03');
        const listed = await shell.type('cat victim/keep.txt\n');
        expect(listed).toContain('precious');
        expect(readFileSync(shell.victim, 'utf8')).toBe('precious');
        held.push(`${name} → blocked at write ${answers.indexOf(BLOCKED) + 1}; victim intact`);
      } finally {
        await shell.close();
      }
    });
  }

  it('a line edited with arrow keys is refused when it is submitted (nothing sent), and ^C clears it', async () => {
    const shell = await shellSession();
    try {
      expect(await shell.type('rm -r victim')).not.toBe(BLOCKED);
      expect(await shell.type('\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D')).not.toBe(BLOCKED);
      expect(await shell.type('f\n')).toBe(
        'write_stdin failed: this input ends a line edited with keys hooks cannot follow (escape sequences or control keys other than backspace, ^U, ^W, ^C); nothing was sent. Clear the line with ^C (\\u0003), then send the whole line as plain text',
      );
      expect(existsSync(shell.victim)).toBe(true);
      await shell.type('\x03');
      expect(await shell.type('cat victim/keep.txt\n')).toContain('precious');
      held.push('arrow-key editing then Enter → refused, nothing sent; ^C cleared the line; victim intact');
    } finally {
      await shell.close();
    }
  });
});
