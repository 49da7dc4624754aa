import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepContext, ToolExecutor } from '@switchyard/protocol';
import { createStepContext } from '@switchyard/kit';
import { invokeTool } from '@switchyard/registry/testing';
import { applyPatchTool } from './apply-patch-tool';
import { gitFileDiff } from './unified-diff';
import { getTurnDiff } from './turn-diff';
import { callPatchTool, workspaceFolders, wrap } from './test-support';

let base: string;
let root: string;

beforeEach(async () => ({ base, root } = await workspaceFolders('apply-patch-turn-')));
afterEach(() => rm(base, { recursive: true, force: true }));

/**
 * A helper run behind a relay that appends the size of every chunk the helper writes to the host
 * to `log` (one number a line): what the host's event loop receives, byte for byte.
 */
async function countingRelay(log: string): Promise<(command: { file: string; args: string[] }) => { file: string; args: string[] }> {
  const relay = join(base, 'relay.cjs');
  await writeFile(
    relay,
    [
      "const { spawn } = require('node:child_process');",
      "const { appendFileSync } = require('node:fs');",
      'const [log, file, ...args] = process.argv.slice(2);',
      "const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'inherit'] });",
      'process.stdin.pipe(child.stdin);',
      "child.stdout.on('data', (chunk) => { appendFileSync(log, `${chunk.length}\\n`); process.stdout.write(chunk); });",
      "child.on('exit', (code) => process.exit(code ?? 1));",
    ].join('\n'),
  );
  return (command) => ({ file: process.execPath, args: [relay, log, command.file, ...command.args] });
}

async function received(log: string): Promise<number> {
  const text = await readFile(log, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).reduce((sum, line) => sum + Number(line), 0);
}

const FILES = 30;
const LINES = 200;
const original = (file: number) => Array.from({ length: LINES }, (_, line) => `file ${file} line ${line} with some text to make it longer`).join('\n') + '\n';
const edit = (text: string, line: number, mark: string) => text.split('\n').map((content, index) => (index === line ? `${content} ${mark}` : content)).join('\n');
const patchOf = (texts: string[], line: number, mark: string) =>
  wrap(...texts.flatMap((text, file) => [`*** Update File: f${file}.txt`, '@@', `-${text.split('\n')[line]}`, `+${text.split('\n')[line]} ${mark}`]));

/** The expected turn diff: each file's git diff from its first state in the turn to its last, sorted by path. */
function expectedTurnDiff(before: string[], after: string[]): string {
  return before
    .map((text, file) => ({ path: `f${file}.txt`, text }))
    .sort((a, b) => (a.path < b.path ? -1 : 1))
    .map(({ path, text }) => gitFileDiff(path, text, after[Number(path.slice(1, -4))]))
    .join('');
}

describe('turn diff kept in the helper', () => {
  it('the host receives each file\'s text once per turn: a later patch of the same files brings diffs and new contents, no baselines', async () => {
    const texts = Array.from({ length: FILES }, (_, file) => original(file));
    await Promise.all(texts.map((text, file) => writeFile(join(root, `f${file}.txt`), text)));
    const log = join(base, 'chunks.log');
    const tool = applyPatchTool({ wrapHelper: await countingRelay(log) });
    const step = createStepContext({ cwd: root });
    try {
      await callPatchTool(patchOf(texts, 10, 'one'), step, [], tool);
      const first = await received(log);
      const middle = texts.map((text) => edit(text, 10, 'one'));
      await callPatchTool(patchOf(middle, 150, 'two'), step, [], tool);
      const second = (await received(log)) - first;
      const final = middle.map((text) => edit(text, 150, 'two'));
      const textBytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
      // First touch: new contents and baselines (two texts a file), plus diffs. Then: new contents and diffs only.
      expect(first).toBeGreaterThan(2 * textBytes);
      expect(second).toBeLessThan(first - 0.8 * textBytes);
      expect(second).toBeLessThan(1.5 * textBytes);
      expect(getTurnDiff(step)).toBe(expectedTurnDiff(texts, final));
      for (const [file, text] of final.entries()) expect(await readFile(join(root, `f${file}.txt`), 'utf8')).toBe(text);
    } finally {
      await tool.dispose?.({ sessionId: step.sessionId });
    }
  });

  it('a turn that moves to a new helper (one ended, another policy\'s) diffs against the turn\'s first contents all the same', async () => {
    const texts = Array.from({ length: 3 }, (_, file) => original(file));
    await Promise.all(texts.map((text, file) => writeFile(join(root, `f${file}.txt`), text)));
    const step = createStepContext({ cwd: root });
    const tool = applyPatchTool();
    const other = applyPatchTool({ wrapHelper: await countingRelay(join(base, 'other.log')) });
    try {
      let now = texts;
      for (const [round, executor] of [tool, tool, other, tool].entries()) {
        await callPatchTool(patchOf(now, 20 + round * 40, `round ${round}`), step, [], executor);
        now = now.map((text) => edit(text, 20 + round * 40, `round ${round}`));
        // The session's helper ends after the first patch: the second goes to a new one, seeded by the host.
        if (round === 0) await tool.dispose?.({ sessionId: step.sessionId });
        expect(getTurnDiff(step)).toBe(expectedTurnDiff(texts, now));
      }
      // Back to the first contents: nothing differs.
      const back = wrap(...now.flatMap((text, file) => [`*** Delete File: f${file}.txt`, `*** Add File: f${file}.txt`, ...texts[file].slice(0, -1).split('\n').map((line) => `+${line}`)]));
      await callPatchTool(back, step, [], other);
      expect(getTurnDiff(step)).toBe('');
    } finally {
      await tool.dispose?.({ sessionId: step.sessionId });
      await other.dispose?.({ sessionId: step.sessionId });
    }
  });
});
