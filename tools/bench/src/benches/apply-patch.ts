import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPatch, gitFileDiff, verifyPatch } from '@switchyard/tool-apply-patch';
import { compare, median, type Bench, type BenchFigure } from '../harness';

const FILES = 100;
const HUNKS = 20;
const GAP = 12; // lines between edited lines, so hunks never share context
const RUNS = 7;

interface Fixture {
  originals: Map<string, string>;
  edited: Map<string, string>;
  patch: string;
  diff: string;
}

/** 100 files × 20 one-line edits, as an apply_patch patch and as a git unified diff of the same edits. */
function fixture(): Fixture {
  const originals = new Map<string, string>();
  const edited = new Map<string, string>();
  const patchLines = ['*** Begin Patch'];
  let diff = '';
  for (let file = 0; file < FILES; file++) {
    const path = `src/module-${String(file).padStart(3, '0')}.ts`;
    const lines = Array.from({ length: HUNKS * GAP + GAP }, (_, line) => `export const value_${file}_${line} = ${line}; // line ${line}`);
    const after = [...lines];
    patchLines.push(`*** Update File: ${path}`);
    for (let hunk = 0; hunk < HUNKS; hunk++) {
      const at = GAP + hunk * GAP;
      after[at] = `export const value_${file}_${at} = ${at * 2}; // edited`;
      patchLines.push('@@', ...lines.slice(at - 3, at).map((line) => ` ${line}`), `-${lines[at]}`, `+${after[at]}`);
      patchLines.push(...lines.slice(at + 1, at + 4).map((line) => ` ${line}`));
    }
    const before = `${lines.join('\n')}\n`;
    const next = `${after.join('\n')}\n`;
    originals.set(path, before);
    edited.set(path, next);
    diff += gitFileDiff(path, before, next);
  }
  patchLines.push('*** End Patch');
  return { originals, edited, patch: patchLines.join('\n'), diff };
}

async function reset(root: string, files: Map<string, string>): Promise<void> {
  await mkdir(join(root, 'src'), { recursive: true });
  await Promise.all([...files].map(([path, content]) => writeFile(join(root, path), content)));
}

async function check(root: string, expected: Map<string, string>, who: string): Promise<void> {
  for (const [path, content] of expected) {
    if ((await readFile(join(root, path), 'utf8')) !== content) throw new Error(`${who} produced a different ${path}`);
  }
}

/**
 * Times `subject` and `reference` RUNS times each (after one warm-up), alternating them so load
 * from other processes hits both alike, and resetting the workspace (untimed) before every run.
 */
async function timePair(
  root: string,
  files: Map<string, string>,
  subject: () => Promise<unknown> | unknown,
  reference: () => Promise<unknown> | unknown,
): Promise<[number, number]> {
  const samples: [number[], number[]] = [[], []];
  for (let run = -1; run < RUNS; run++) {
    for (const [slot, body] of [subject, reference].entries()) {
      await reset(root, files);
      const start = performance.now();
      await body();
      if (run >= 0) samples[slot].push(performance.now() - start);
    }
  }
  return [median(samples[0]), median(samples[1])];
}

const bench: Bench = {
  name: 'apply_patch',
  async run(): Promise<BenchFigure[]> {
    const base = await mkdtemp(join(tmpdir(), 'bench-apply-patch-'));
    try {
      const { originals, edited, patch, diff } = fixture();
      const root = join(base, 'workspace');
      const diffPath = join(base, 'edits.diff');
      await writeFile(diffPath, diff);
      const git = (...args: string[]) => execFileSync('git', ['apply', ...args, diffPath], { cwd: root, stdio: 'ignore' });

      // Both produce the same files.
      await reset(root, originals);
      await applyPatch(patch, { root });
      await check(root, edited, 'apply_patch');
      await reset(root, originals);
      git();
      await check(root, edited, 'git apply');

      const [applyMs, gitMs] = await timePair(root, originals, () => applyPatch(patch, { root }), () => git());
      const [verifyMs, checkMs] = await timePair(root, originals, () => verifyPatch(patch, { root }), () => git('--check'));
      const note = `${FILES} files × ${HUNKS} hunks, median of ${RUNS} alternating runs; git includes its process start`;
      return [
        compare('apply 100 files × 20 hunks (all-or-nothing, atomic writes)', applyMs, 'ms', { name: 'git apply', value: gitMs }, { note }),
        compare('verify only (parse, read, locate, no writes)', verifyMs, 'ms', { name: 'git apply --check', value: checkMs }, { note }),
      ];
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  },
};

export default bench;
