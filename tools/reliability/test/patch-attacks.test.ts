import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sandboxCommand, sandboxEnvironment } from '@switchyard/sandbox';
import { applyPatch, applyPatchTool } from '@switchyard/tool-apply-patch';
import { byProfile, report } from '../src/profile';
import { openHarness, texts } from './helpers';

/** A successful apply_patch answer: the shell-style wrapper (exit code, wall time) around the summary. */
const PATCH_APPLIED = /^Exit code: 0\nWall time: \d+ seconds\nOutput:\nSuccess\. /;

// Each attack tries to make apply_patch write outside its workspace, edit git metadata, or hurt
// the host, through the library and through the tool (its helper process, with and without the
// exec sandbox).
const scratch = mkdtempSync(join(tmpdir(), 'reliability-patch-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const held: string[] = [];
afterAll(() => report('patch attacks', `${held.length} attacks failed:\n  - ${held.join('\n  - ')}`));

let counter = 0;
const outsides: string[] = [];
afterAll(() => outsides.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

/**
 * A workspace with a folder `d`, and a folder outside it holding `victim.txt`. `outside` is under
 * /var/tmp, not /tmp: the sandbox sees it (read-only), where a private /tmp would swallow a write
 * instead of refusing it. Both are world-writable, so for the sandbox user only the read-only
 * mount stands in the way, not file permissions.
 */
function workspaceBesideOutside(): { root: string; outside: string } {
  const base = join(scratch, `case-${++counter}`);
  const root = join(base, 'workspace');
  mkdirSync(join(root, 'd'), { recursive: true });
  const outside = mkdtempSync('/var/tmp/reliability-patch-outside-');
  outsides.push(outside);
  writeFileSync(join(outside, 'victim.txt'), 'original\n');
  chmodSync(outside, 0o777);
  chmodSync(join(outside, 'victim.txt'), 0o666);
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
  // Bounded by its owner: it ends when this test process or the workspace is gone (a test that
  // timed out, or a runner torn down before `finally`, once left a loop spinning for hours).
  const script = `cd "${root}" || exit 1
while kill -0 ${process.pid} 2>/dev/null && [ -d "${root}" ]; do
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

/** Nothing outside changed, and no temporary file was left, inside or out. */
function expectNothingOutside(root: string, outside: string): void {
  expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('original\n');
  expect(listing(outside)).toEqual(['victim.txt']);
  expect(listing(join(root, '..')).filter((name) => name.includes('.apply-patch.tmp'))).toEqual([]);
}

type Counts = Map<string, number>;
const tally = (counts: Counts, key: string, by = 1) => counts.set(key, (counts.get(key) ?? 0) + by);
const countsLine = (counts: Counts) => [...counts].map(([key, value]) => `${key} ${value}`).join(', ');

/** `attempts` apply_patch tool calls (one session per tool, so one helper each) adding `d/…`; counts applied and refused. */
async function toolAttempts(root: string, tools: ReturnType<typeof applyPatchTool>[], attempts: number, label: string, counts: Counts): Promise<void> {
  const harnesses = await Promise.all(tools.map((tool) => openHarness({ toolMode: 'direct', tools: [tool], cwd: root })));
  try {
    for (let attempt = 0; attempt < attempts; attempt++) {
      const item = await harnesses[attempt % harnesses.length].step.dispatch({
        type: 'custom_tool_call',
        call_id: `race-${attempt}`,
        name: 'apply_patch',
        input: `*** Begin Patch\n*** Add File: d/tool-${attempt % 2 === 0 ? 'victim.txt' : `${attempt}.txt`}\n+pwned\n*** End Patch`,
      });
      const text = texts(item).join('');
      tally(counts, PATCH_APPLIED.test(text) ? `${label} applied` : /Read-only file system/.test(text) ? `${label} refused by the kernel` : `${label} refused`);
    }
  } finally {
    await Promise.all(harnesses.map((harness) => harness.close()));
  }
}

/** The repository checkout (tsx and the sources the fixture imports live there). */
const checkout = fileURLToPath(new URL('../../..', import.meta.url));

/** Runs fixtures/patch-race-attempts.ts inside the exec sandbox apply_patch's helper gets; resolves with its outcome counts. */
async function sandboxedAttempts(root: string, attempts: number): Promise<Record<string, number>> {
  const node = realpathSync(process.execPath);
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const fixture = fileURLToPath(new URL('./fixtures/patch-race-attempts.ts', import.meta.url));
  const policy = { mode: 'workspace-write', root } as const;
  // Node and the checkout may be hidden inside (a Node 24 tree under ~/.cache, a clone under /tmp).
  const command = sandboxCommand([node, '--conditions=@switchyard/source', '--import', tsx, fixture, root, String(attempts)], policy, { cwd: root, readOnlyPaths: [node, checkout] });
  const child = spawn(command.file, command.args, { cwd: root, env: sandboxEnvironment({ mode: 'workspace-write', writable: [root] }), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
  expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
  return JSON.parse(stdout) as Record<string, number>;
}

const ATTEMPTS = byProfile(600, 5_000);
const TOOL_ATTEMPTS = byProfile(10, 200);
const RACE_PATCHES = 900;
/** A write inside the sandbox that no path check stopped and the read-only mount refused. */
const KERNEL_REFUSED = 'WRITE_FAILED read-only (no path check)';

describe('apply_patch attacks', () => {
  it(`the symlink swap race without a sandbox: ${ATTEMPTS} attempts of the helper's walk and ${TOOL_ATTEMPTS} tool calls against a live swap loop write nothing outside`, async () => {
    const { root, outside } = workspaceBesideOutside();
    const loop = startSwapLoop(root, outside);
    const counts: Counts = new Map();
    try {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const name = attempt % 2 === 0 ? 'victim.txt' : `new-${attempt}.txt`;
        try {
          // In this process: the same verify-then-commit the unsandboxed helper runs.
          await applyPatch(`*** Begin Patch\n*** Add File: d/${name}\n+pwned ${attempt}\n*** End Patch`, { root });
          tally(counts, 'applied');
        } catch (error) {
          tally(counts, (error as { code?: string }).code ?? 'other');
        }
      }
      await toolAttempts(root, [applyPatchTool(), applyPatchTool({ sandbox: { mode: 'danger-full-access' } })], TOOL_ATTEMPTS, 'tool', counts);
    } finally {
      stop(loop);
    }
    expectNothingOutside(root, outside);
    // The race was live: some attempts landed inside, some were refused; the tool's helper ran.
    expect(counts.get('applied') ?? 0).toBeGreaterThan(0);
    expect(ATTEMPTS - (counts.get('applied') ?? 0)).toBeGreaterThan(0);
    expect((counts.get('tool applied') ?? 0) + (counts.get('tool refused') ?? 0)).toBe(TOOL_ATTEMPTS);
    held.push(`symlink swap race, unsandboxed, ${ATTEMPTS + TOOL_ATTEMPTS} attempts (${countsLine(counts)}): nothing written outside, no temporary files left`);
  }, 240_000);

  it(`the symlink swap race in the exec sandbox: ${ATTEMPTS} attempts inside it (half with the path check off) and ${TOOL_ATTEMPTS} sandboxed tool calls write nothing outside`, async () => {
    const { root, outside } = workspaceBesideOutside();
    const loop = startSwapLoop(root, outside);
    const counts: Counts = new Map();
    let rounds = 0;
    try {
      // The race is live but its timing is the scheduler's: under heavy load a whole round can miss
      // the window where only the kernel stops a write. Another round (at most three more) then runs.
      for (let round = 0; round < 4 && !counts.has(KERNEL_REFUSED); round++) {
        for (const [key, value] of Object.entries(await sandboxedAttempts(root, ATTEMPTS))) tally(counts, key, value);
        rounds++;
      }
      const sandboxed = { sandbox: { mode: 'workspace-write' } } as const;
      await toolAttempts(root, [applyPatchTool(sandboxed), applyPatchTool({ ...sandboxed, allowOutsideRoot: true })], TOOL_ATTEMPTS, 'sandboxed tool', counts);
    } finally {
      stop(loop);
    }
    expectNothingOutside(root, outside);
    // Live race, and the kernel refused writes that no path check stopped.
    expect(counts.get('applied') ?? 0).toBeGreaterThan(0);
    expect(counts.get(KERNEL_REFUSED) ?? 0).toBeGreaterThan(0);
    expect([...counts.values()].reduce((sum, value) => sum + value, 0)).toBe(rounds * ATTEMPTS + TOOL_ATTEMPTS);
    // The sandboxed helper starts (its Node and script are shown to it wherever they live) and writes.
    expect(counts.get('sandboxed tool applied') ?? 0).toBeGreaterThan(0);
    held.push(`symlink swap race, sandboxed, ${rounds * ATTEMPTS + TOOL_ATTEMPTS} attempts (${countsLine(counts)}): nothing written outside, no temporary files left`);
  }, 240_000);

  // The sandboxed tool keeps one helper per session, so a call pays a message, not a process
  // tree: 900 patches finish within the test's 60 s (each used to start Node inside bubblewrap).
  it(`the symlink swap race through the long-lived sandboxed helper: ${RACE_PATCHES} small patches within 60 s write nothing outside`, async () => {
    const { root, outside } = workspaceBesideOutside();
    const loop = startSwapLoop(root, outside);
    const counts: Counts = new Map();
    const started = performance.now();
    try {
      const sandboxed = { sandbox: { mode: 'workspace-write' } } as const;
      await toolAttempts(root, [applyPatchTool(sandboxed), applyPatchTool({ ...sandboxed, allowOutsideRoot: true })], RACE_PATCHES, 'sandboxed tool', counts);
    } finally {
      stop(loop);
    }
    const seconds = (performance.now() - started) / 1000;
    expectNothingOutside(root, outside);
    expect([...counts.values()].reduce((sum, value) => sum + value, 0)).toBe(RACE_PATCHES);
    // The race was live and the helper wrote: some landed inside, some were refused.
    expect(counts.get('sandboxed tool applied') ?? 0).toBeGreaterThan(0);
    expect(RACE_PATCHES - (counts.get('sandboxed tool applied') ?? 0)).toBeGreaterThan(0);
    held.push(`symlink swap race, ${RACE_PATCHES} sandboxed tool calls through the long-lived helper in ${seconds.toFixed(1)} s (${countsLine(counts)}): nothing written outside, no temporary files left`);
  }, 60_000);

  it('.git metadata at any depth is refused by the tool with a message naming the path', async () => {
    const { root } = workspaceBesideOutside();
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
    // Sandboxed, with the name check turned off (`protectedNames: []`): the kernel refuses, since
    // every .git is mounted read-only.
    const unguarded = await openHarness({ toolMode: 'direct', tools: [applyPatchTool({ protectedNames: [], sandbox: { mode: 'workspace-write' } })], cwd: root });
    try {
      for (const [path, body] of [
        ['.git/config', '*** Add File: .git/config\n+[core]\n+\tfsmonitor = "touch /tmp/pwned"'],
        ['vendor/lib/.git/hooks/post-checkout', '*** Add File: vendor/lib/.git/hooks/post-checkout\n+#!/bin/sh'],
      ]) {
        const item = await unguarded.step.dispatch({ type: 'custom_tool_call', call_id: `kernel-${path}`, name: 'apply_patch', input: `*** Begin Patch\n${body}\n*** End Patch` });
        expect(texts(item).join('')).toMatch(new RegExp(`^Failed to (write file|create parent directories for) ${path.replace(/[.]/g, '\\.')}: Read-only file system\\. No files were changed\\.$`));
      }
    } finally {
      await unguarded.close();
    }
    expect(readFileSync(join(root, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(existsSync(join(root, 'vendor', 'lib', '.git', 'hooks'))).toBe(false);
    held.push('.git/config, vendor/lib/.git/hooks/*, .Git/config: refused with PROTECTED_PATH naming the path; sandboxed with the name check off, refused by the kernel (read-only .git)');
  });

  it('an Update of a 140 MB file of newlines answers an error; the host (256 MB heap) lives and stays small', () => {
    const { root } = workspaceBesideOutside();
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

  // A named pipe (or a socket, a device) where a file is expected: opening a FIFO for reading
  // waits for a writer, so a helper that opens before it checks hangs until the call is aborted.
  it('Update, Delete and Add of a named pipe, a socket and a device (also through a link) are refused at once as "not a file", sandboxed and not', async () => {
    const { root } = workspaceBesideOutside();
    execFileSync('mkfifo', [join(root, 'pipe')]);
    symlinkSync('pipe', join(root, 'link'));
    const socket: Server = createServer();
    await new Promise<void>((resolve) => socket.listen(join(root, 'sock'), resolve));
    const asRoot = process.geteuid?.() === 0;
    if (asRoot) execFileSync('mknod', [join(root, 'null'), 'c', '1', '3']);
    // Control: the pipe is a real trap — a plain open for reading is still waiting after 2 s.
    const blocked = spawnSync(process.execPath, ['-e', `require('node:fs').openSync(${JSON.stringify(join(root, 'pipe'))}, 'r'); console.log('opened')`], { timeout: 2_000, encoding: 'utf8' });
    expect(blocked.signal).toBe('SIGTERM');
    expect(blocked.stdout).toBe('');
    const kinds: Record<string, string> = { pipe: 'a named pipe', link: 'a named pipe', sock: 'a socket', null: 'a character device' };
    // The reference's words for what is not a file (a folder), with what it is instead.
    const notAFile = (path: string) => `path \`${root}/${path}\` is not a file (${kinds[path]})`;
    const sections = (path: string): Array<[string, string]> => [
      [`*** Update File: ${path}\n@@\n-a\n+b`, `Failed to read file to update ${root}/${path}: ${notAFile(path)}`],
      [`*** Delete File: ${path}`, `Failed to read ${root}/${path}: ${notAFile(path)}`],
      [`*** Add File: ${path}\n+b`, `Failed to write file ${path}: ${notAFile(path)}`],
    ];
    const answered: string[] = [];
    try {
      for (const options of [{}, { sandbox: { mode: 'workspace-write' } } as const]) {
        const harness = await openHarness({ toolMode: 'direct', tools: [applyPatchTool(options)], cwd: root });
        try {
          for (const path of Object.keys(kinds).filter((name) => asRoot || name !== 'null')) {
            for (const [section, message] of sections(path)) {
              const call = harness.step.dispatch({ type: 'custom_tool_call', call_id: `${path}-${answered.length}`, name: 'apply_patch', input: `*** Begin Patch\n${section}\n*** End Patch` });
              // The helper's own timeout is 120 s; "at once" here is well under the test's minute, whatever the load.
              const text = await Promise.race([call.then((item) => texts(item).join('')), new Promise<string>((resolve) => setTimeout(() => resolve('(no answer within 20 s)'), 20_000))]);
              expect(text, `${JSON.stringify(options)} ${section.split('\n')[0]}`).toBe(`apply_patch verification failed: ${message}`);
              answered.push(section.split('\n')[0]);
            }
          }
        } finally {
          await harness.close();
        }
      }
    } finally {
      socket.close();
    }
    // Nothing replaced them: the pipe is still a pipe, the link still a link.
    expect(lstatSync(join(root, 'pipe')).isFIFO()).toBe(true);
    expect(lstatSync(join(root, 'link')).isSymbolicLink()).toBe(true);
    held.push(`${answered.length} patches on a named pipe, a link to it, a socket${asRoot ? ' and a device' : ''}: each refused at once ("path … is not a file (a named pipe)"), unsandboxed and sandboxed; a plain open of the pipe blocks (control)`);
  }, 120_000);
});
