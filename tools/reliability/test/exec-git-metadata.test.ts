import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execTools, type ExecToolsOptions } from '@switchyard/tool-exec';
import { applyPatchTool } from '@switchyard/tool-apply-patch';
import { report } from '../src/profile';
import { callItem, openHarness, texts } from './helpers';

// Nothing a sandboxed command plants runs later: git metadata created during a command, at any
// depth, must not make the host's own (unsandboxed) `git status` run a planted program.
const scratch = mkdtempSync(join(tmpdir(), 'reliability-git-metadata-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const held: string[] = [];
afterAll(() => report('exec git metadata', `${held.length} plantings ran nothing:\n  - ${held.join('\n  - ')}`));

function text(item: unknown): string {
  return texts(item as never).join('\n');
}

let counter = 0;
function places(): { root: string; outside: string } {
  const base = join(scratch, `case-${++counter}`);
  mkdirSync(join(base, 'ws'), { recursive: true });
  mkdirSync(join(base, 'outside'));
  return { root: join(base, 'ws'), outside: join(base, 'outside') };
}

/** The host's own git, unsandboxed, as the host user: `git status` in `dir` (a failure is fine). */
function hostGitStatus(dir: string): void {
  try {
    execFileSync('git', ['-C', dir, 'status', '--short'], { stdio: 'ignore', timeout: 20_000, env: { PATH: process.env.PATH, HOME: dir } });
  } catch {
    // "not a git repository" or a refusal: either way nothing planted may run
  }
}

/** Plants a repository with a core.fsmonitor and a hook writing into `outside`, in `dir` (relative to the workspace). */
const plant = (dir: string, outside: string) =>
  `git init -q ${dir} && git -C ${dir} config core.fsmonitor 'touch ${outside}/fsmonitor-ran' && printf '#!/bin/sh\\ntouch ${outside}/hook-ran\\n' > ${dir}/.git/hooks/post-index-change && chmod +x ${dir}/.git/hooks/post-index-change; echo planted`;

async function run(root: string, cmd: string, options: ExecToolsOptions = {}): Promise<string> {
  const exec = execTools({ root, approvalPolicy: 'never', shell: '/bin/sh', ...options });
  const harness = await openHarness({ toolMode: 'direct', cwd: root, tools: [...exec] });
  try {
    return text(await harness.step.dispatch(callItem('plant', 'exec_command', { cmd, yield_time_ms: 20_000 })));
  } finally {
    await harness.close();
    await exec.shutdown();
  }
}

describe('exec git metadata: nothing planted runs later', () => {
  it('control: unsandboxed, the same planting does run at the host’s git status (the check can fail)', async () => {
    const { root, outside } = places();
    const answer = await run(root, plant('sub', outside), { sandbox: 'danger-full-access' });
    expect(answer).toContain('planted');
    hostGitStatus(join(root, 'sub'));
    expect(existsSync(join(outside, 'fsmonitor-ran'))).toBe(true);
  });

  for (const dir of ['sub', 'a/b/c/d/e']) {
    it(`git init ${dir} + core.fsmonitor + a hook inside the sandbox: renamed before the answer, the host's git status runs nothing`, async () => {
      const { root, outside } = places();
      const answer = await run(root, `mkdir -p ${dir} && ${plant(dir, outside)}`);
      expect(answer).toContain('planted');
      expect(answer).toMatch(new RegExp(`\\nsandbox: new git metadata ${dir}/\\.git was renamed to ${dir}/\\.git\\.untrusted-[0-9a-f]{6}: a sandboxed command cannot create a repository`));
      expect(existsSync(join(root, dir, '.git'))).toBe(false);
      hostGitStatus(join(root, dir));
      expect(readdirSync(outside)).toEqual([]);
      held.push(`git init ${dir} with core.fsmonitor and a hook: renamed to .git.untrusted-*, host git status ran nothing`);
    });
  }

  it('a settled workspace the walk already knows: a repository planted deep, its directory times set back, is still renamed', async () => {
    const { root, outside } = places();
    for (let a = 0; a < 30; a++) for (let b = 0; b < 30; b++) mkdirSync(join(root, `d${a}`, `e${b}`), { recursive: true });
    // Older than two seconds: the walk keeps what it read of these directories and reads them no more.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await run(root, 'echo warm')).toContain('warm');
    // The planting restores the times of the directory it planted in, as `touch -d` would.
    const dir = 'd17/e23';
    const answer = await run(root, `touch -r ${dir} times && ${plant(dir, outside)} && touch -r times ${dir}`);
    expect(answer).toContain('planted');
    expect(answer).toMatch(/\nsandbox: new git metadata d17\/e23\/\.git was renamed to d17\/e23\/\.git\.untrusted-[0-9a-f]{6}/);
    expect(existsSync(join(root, dir, '.git'))).toBe(false);
    hostGitStatus(join(root, dir));
    expect(readdirSync(outside)).toEqual([]);
    held.push('a repository planted in a directory the walk had cached, with the directory times set back: renamed, host git status ran nothing');
  });

  it('50,000 empty top-level folders, then a repository planted at zz/r (issue 47 row 1): the check fails closed, it never claims a clean tree', async () => {
    const { root, outside } = places();
    // One mkdir with every name: the folders cost the command a second, not the test minutes.
    const answer = await run(root, `mkdir $(seq -f f%g 50000) && ${plant('zz/r', outside)}`);
    expect(answer).toContain('planted');
    expect(readdirSync(root)).toHaveLength(50_001);
    // The walk stops after 50,000 directories, before zz/r: the answer says the check could not finish.
    expect(answer).toMatch(/\nsandbox: new git metadata could not be checked in the workspace: it holds more than 50,000 directories, so a \.git a sandboxed command created there may remain and run its hooks and config at the next git command; do not run git in the workspace before removing the extra directories\n/);
    expect(answer).not.toMatch(/zz\/r\/\.git was renamed/);
    // Control: the planted repository is live, so the warning is what stands between it and the host's git.
    expect(existsSync(join(root, 'zz/r/.git'))).toBe(true);
    hostGitStatus(join(root, 'zz/r'));
    expect(existsSync(join(outside, 'fsmonitor-ran'))).toBe(true);
    // 50,000 folders take longer to remove than an afterAll hook may run.
    rmSync(root, { recursive: true, force: true });
    held.push('50,000 folders then a planted zz/r: the walk cannot reach it and the answer says so ("could not be checked … do not run git"), never a silent pass (before: no line at all)');
  }, 600_000);

  it('a gitfile pointing at a planted git directory, and a repository planted by a background child after the answer', async () => {
    const { root, outside } = places();
    const exec = execTools({ root, approvalPolicy: 'never', shell: '/bin/sh', processScope: 'session' });
    const harness = await openHarness({ toolMode: 'direct', cwd: root, tools: [...exec] });
    try {
      const gitfile = `mkdir -p linked && git init -q --bare evil && git --git-dir=evil config core.fsmonitor 'touch ${outside}/gitfile-ran' && git --git-dir=evil config core.bare false && echo "gitdir: ../evil" > linked/.git; echo planted`;
      const first = text(await harness.step.dispatch(callItem('gitfile', 'exec_command', { cmd: gitfile, yield_time_ms: 20_000 })));
      expect(first).toMatch(/\nsandbox: new git metadata linked\/\.git was renamed to linked\/\.git\.untrusted-[0-9a-f]{6}/);
      hostGitStatus(join(root, 'linked'));
      // Later: a tty command answers first, then plants; its next poll (and its end) catch it.
      const late = await harness.step.dispatch(callItem('late', 'exec_command', { cmd: `sleep 1; mkdir -p later && ${plant('later', outside)}; sleep 1`, tty: true, yield_time_ms: 250 }));
      const id = Number(/session ID (\d+)/.exec(text(late))?.[1]);
      expect(id).toBeGreaterThan(0);
      const polled = text(await harness.step.dispatch(callItem('poll', 'write_stdin', { session_id: id, chars: '', yield_time_ms: 10_000 })));
      expect(polled).toMatch(/sandbox: new git metadata later\/\.git was renamed to later\/\.git\.untrusted-[0-9a-f]{6}/);
      hostGitStatus(join(root, 'later'));
      expect(readdirSync(outside)).toEqual([]);
      held.push('gitfile to a planted directory and a repository planted after the answer: renamed, host git status ran nothing');
    } finally {
      await harness.close();
      await exec.shutdown();
    }
  });

  it('a workspace root that is not a repository keeps no trace of the sandbox (no empty .git)', async () => {
    const { root } = places();
    const exec = execTools({ root, approvalPolicy: 'never', shell: '/bin/sh' });
    const harness = await openHarness({ toolMode: 'direct', cwd: root, tools: [...exec] });
    try {
      // While a command runs, <root>/.git is its read-only mount point; afterwards it is gone.
      const during = text(await harness.step.dispatch(callItem('during', 'exec_command', { cmd: 'test -d .git && echo mount-point; mkdir .git/x 2>/dev/null || echo read-only; touch made', yield_time_ms: 20_000 })));
      expect(during).toMatch(/Output:\nmount-point\nread-only\n$/);
      expect(readdirSync(root)).toEqual(['made']);
      const [first, second] = await Promise.all(
        ['sleep 1', 'sleep 2'].map((cmd, index) => harness.step.dispatch(callItem(`c${index}`, 'exec_command', { cmd, yield_time_ms: 20_000 }))),
      );
      expect(text(first)).toContain('Process exited with code 0');
      expect(text(second)).toContain('Process exited with code 0');
      expect(readdirSync(root)).toEqual(['made']);
      held.push('a non-repository workspace: .git exists only while a command runs (read-only), none left after one or two overlapping commands');
    } finally {
      await harness.close();
      await exec.shutdown();
    }
  });

  it('a sandboxed apply_patch in a non-repository workspace leaves no .git behind either', async () => {
    const { root } = places();
    const harness = await openHarness({ toolMode: 'direct', cwd: root, sandboxMode: 'workspace-write', tools: [applyPatchTool()] });
    try {
      const patch = '*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n';
      const answer = text(await harness.step.dispatch({ type: 'custom_tool_call', call_id: 'p1', name: 'apply_patch', input: patch }));
      expect(answer).toContain('A notes.txt');
      // the placeholder goes when the helper process is gone, which may be just after its answer
      for (let waited = 0; waited < 5_000 && readdirSync(root).length > 1; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(readdirSync(root)).toEqual(['notes.txt']);
      held.push('a sandboxed apply_patch in a non-repository workspace: only the patched file, no .git');
    } finally {
      await harness.close();
    }
  });
});
