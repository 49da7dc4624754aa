import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { applyPatch, applyPatchTool } from '@switchyard/tool-apply-patch';
import { byProfile, report } from '../src/profile';
import { openHarness, texts } from './helpers';

// Each attack tries to make apply_patch write outside its workspace, edit git metadata, or hurt
// the host, through the library and through the tool (its helper process, unsandboxed here).
const scratch = mkdtempSync(join(tmpdir(), 'reliability-patch-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const held: string[] = [];
afterAll(() => report('patch attacks', `${held.length} attacks failed:\n  - ${held.join('\n  - ')}`));

let counter = 0;
function workspace(): { root: string; outside: string } {
  const base = join(scratch, `case-${++counter}`);
  const root = join(base, 'workspace');
  const outside = join(base, 'outside');
  mkdirSync(join(root, 'd'), { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(outside, 'victim.txt'), 'original\n');
  return { root, outside };
}

/** Every entry below `folder`, recursively. */
function listing(folder: string): string[] {
  return readdirSync(folder, { recursive: true }).map(String).sort();
}

/**
 * The swap loop of the report, made self-healing: `d` is moved away, replaced by a link to
 * `outside`, the link removed and `d` put back — over and over. When a patch created a fresh `d`
 * in the gap, the old one is dropped so the loop keeps racing.
 */
function startSwapLoop(root: string, outside: string): ChildProcess {
  const script = `cd "${root}" || exit 1
while :; do
  mv -T d d.real 2>/dev/null
  ln -s "${outside}" d 2>/dev/null
  rm -f d 2>/dev/null
  if [ -d d ] && [ ! -L d ]; then rm -rf d.real; else mv -T d.real d 2>/dev/null; fi
done`;
  return spawn('/bin/sh', ['-c', script], { stdio: 'ignore', detached: true });
}

function stop(loop: ChildProcess): void {
  try {
    process.kill(-(loop.pid as number), 'SIGKILL');
  } catch {
    // gone
  }
}

const ATTEMPTS = byProfile(600, 5_000);
const TOOL_ATTEMPTS = byProfile(10, 200);

describe('apply_patch attacks', () => {
  it(`the symlink swap race: ${ATTEMPTS} library attempts and ${TOOL_ATTEMPTS} tool attempts against a live swap loop write nothing outside`, async () => {
    const { root, outside } = workspace();
    const loop = startSwapLoop(root, outside);
    const outcomes = new Map<string, number>();
    const count = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    try {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const name = attempt % 2 === 0 ? 'victim.txt' : `new-${attempt}.txt`;
        try {
          await applyPatch(`*** Begin Patch\n*** Add File: d/${name}\n+pwned ${attempt}\n*** End Patch`, { root });
          count('applied');
        } catch (error) {
          count((error as { code?: string }).code ?? 'other');
        }
      }
      const harness = await openHarness({ toolMode: 'direct', tools: [applyPatchTool()], cwd: root });
      // The second half goes through the exec sandbox (workspace-write), the first half without one.
      const sandboxed = await openHarness({ toolMode: 'direct', tools: [applyPatchTool({ sandbox: { mode: 'workspace-write' } })], cwd: root });
      try {
        for (let attempt = 0; attempt < TOOL_ATTEMPTS; attempt++) {
          const through = attempt < TOOL_ATTEMPTS / 2 ? harness : sandboxed;
          const item = await through.step.dispatch({
            type: 'custom_tool_call',
            call_id: `race-${attempt}`,
            name: 'apply_patch',
            input: `*** Begin Patch\n*** Add File: d/tool-${attempt % 2 === 0 ? 'victim.txt' : `${attempt}.txt`}\n+pwned\n*** End Patch`,
          });
          const kind = through === harness ? 'tool' : 'sandboxed tool';
          count(texts(item).join('').startsWith('Success.') ? `${kind} applied` : `${kind} refused`);
        }
      } finally {
        await harness.close();
        await sandboxed.close();
      }
    } finally {
      stop(loop);
    }
    expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('original\n');
    expect(listing(outside)).toEqual(['victim.txt']);
    // No temporary file was left anywhere, inside either.
    expect(listing(join(root, '..')).filter((name) => name.includes('.apply-patch.tmp'))).toEqual([]);
    // The race was live: some attempts landed inside, some were refused.
    expect(outcomes.get('applied') ?? 0).toBeGreaterThan(0);
    const summary = [...outcomes].map(([key, value]) => `${key} ${value}`).join(', ');
    held.push(`symlink swap race, ${ATTEMPTS + TOOL_ATTEMPTS} attempts (${summary}): nothing written outside, no temporary files left`);
  }, 240_000);

  it('.git metadata at any depth is refused by the tool with a message naming the path', async () => {
    const { root } = workspace();
    mkdirSync(join(root, '.git'));
    writeFileSync(join(root, '.git', 'config'), '[core]\n');
    mkdirSync(join(root, 'vendor', 'lib', '.git'), { recursive: true });
    const harness = await openHarness({ toolMode: 'direct', tools: [applyPatchTool()], cwd: root });
    try {
      const tries: Array<[string, string]> = [
        ['.git/config', '*** Add File: .git/config\n+[core]\n+\tfsmonitor = "touch /tmp/pwned"'],
        ['vendor/lib/.git/hooks/post-checkout', '*** Add File: vendor/lib/.git/hooks/post-checkout\n+#!/bin/sh'],
        ['.Git/config', '*** Update File: .Git/config\n-[core]\n+[core]\n+\thooksPath = /tmp'],
      ];
      for (const [path, body] of tries) {
        const item = await harness.step.dispatch({ type: 'custom_tool_call', call_id: path, name: 'apply_patch', input: `*** Begin Patch\n${body}\n*** End Patch` });
        expect(texts(item).join('')).toBe(`apply_patch verification failed: path '${path}' is inside ${path.split('/').find((part) => part.toLowerCase() === '.git')}, which apply_patch does not change`);
      }
    } finally {
      await harness.close();
    }
    expect(readFileSync(join(root, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(existsSync(join(root, 'vendor', 'lib', '.git', 'hooks'))).toBe(false);
    held.push('.git/config, vendor/lib/.git/hooks/*, .Git/config: refused with PROTECTED_PATH naming the path');
  });

  it('an Update of a 140 MB file of newlines answers an error; the host (256 MB heap) lives and stays small', () => {
    const { root } = workspace();
    // Made by the shell, so this process never holds the 140 MB either.
    const made = spawnSync('/bin/sh', ['-c', `head -c 146800640 /dev/zero | tr '\\0' '\\n' > "${join(root, 'big.txt')}"`]);
    expect(made.status).toBe(0);
    const fixture = fileURLToPath(new URL('./fixtures/patch-bomb.ts', import.meta.url));
    const child = spawnSync(process.execPath, ['--max-old-space-size=256', '--no-node-snapshot', '--conditions=@switchyard/source', '--import', 'tsx', fixture, root], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    rmSync(join(root, 'big.txt'));
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    const lines = child.stdout.trim().split('\n');
    expect(lines.at(-1)).toBe('host alive');
    const [tool, library, usage] = lines.slice(0, 3).map((line) => JSON.parse(line) as { text?: string; maxRssMb?: number });
    const refusal = 'big.txt is 140 MiB; apply_patch edits files of at most 64 MiB';
    expect(tool.text).toBe(`apply_patch verification failed: ${refusal}`);
    expect(library.text).toBe(refusal);
    expect(usage.maxRssMb).toBeLessThan(400);
    held.push(`Update of a 140 MB newline file → "${refusal}"; host peak RSS ${usage.maxRssMb} MB, alive`);
  });
});
