import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execTools, type ExecToolsOptions } from '@switchyard/tool-exec';
import { applyPatchTool } from '@switchyard/tool-apply-patch';
import { report } from '../src/profile';
import { callItem, openHarness, outputText } from './helpers';

// Nothing a sandboxed command plants runs later: git metadata created during a command, at any
// depth, must not make the host's own (unsandboxed) `git status` run a planted program.
const scratch = mkdtempSync(join(tmpdir(), 'reliability-git-metadata-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const held: string[] = [];
afterAll(() => report('exec git metadata', `${held.length} plantings ran nothing:\n  - ${held.join('\n  - ')}`));


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

/** Runs `cmd` with exec_command: the answer's text and, for a failure, its code (from `tool-call-end`). */
async function runFull(root: string, cmd: string, options: ExecToolsOptions = {}): Promise<{ answer: string; code: string | undefined }> {
  const exec = execTools({ root, approvalPolicy: 'never', shell: '/bin/sh', ...options });
  const harness = await openHarness({ toolMode: 'direct', cwd: root, tools: [...exec] });
  let code: string | undefined;
  harness.session.on('tool-call-end', (event) => void (code = event.error?.code));
  try {
    const answer = outputText(await harness.step.dispatch(callItem('plant', 'exec_command', { cmd, yield_time_ms: 20_000 })));
    return { answer, code };
  } finally {
    await harness.close();
    await exec.shutdown();
  }
}

async function execAnswer(root: string, cmd: string, options: ExecToolsOptions = {}): Promise<string> {
  return (await runFull(root, cmd, options)).answer;
}

/** The refusal when a writable root holds more directories than the walk's bound, before and after a command. */
const tooManyBefore = (bound: string) =>
  `sandbox: nothing was run: the workspace holds more than ${bound} directories (node_modules not counted), more than the sandbox searches for .git metadata to keep read-only; remove the directories that are not needed (with sandbox_permissions "require_escalated"), or ask the user to raise the sandbox limit gitWalkDirectories`;
const tooManyAfter = (bound: string) =>
  `sandbox: the command failed closed: the workspace now holds more than ${bound} directories (node_modules not counted), so the search for .git metadata the command may have created (whose hooks and config the host's git would run) could not finish; its output is withheld and it was stopped if still running. Do not run git there; remove the directories that are not needed (with sandbox_permissions "require_escalated"), or ask the user to raise the sandbox limit gitWalkDirectories`;

describe('exec git metadata: nothing planted runs later', () => {
  it('control: unsandboxed, the same planting does run at the host’s git status (the check can fail)', async () => {
    const { root, outside } = places();
    const answer = await execAnswer(root, plant('sub', outside), { sandbox: 'danger-full-access' });
    expect(answer).toContain('planted');
    hostGitStatus(join(root, 'sub'));
    expect(existsSync(join(outside, 'fsmonitor-ran'))).toBe(true);
  });

  for (const dir of ['sub', 'a/b/c/d/e']) {
    it(`git init ${dir} + core.fsmonitor + a hook inside the sandbox: renamed before the answer, the host's git status runs nothing`, async () => {
      const { root, outside } = places();
      const answer = await execAnswer(root, `mkdir -p ${dir} && ${plant(dir, outside)}`);
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
    expect(await execAnswer(root, 'echo warm')).toContain('warm');
    // The planting restores the times of the directory it planted in, as `touch -d` would.
    const dir = 'd17/e23';
    const answer = await execAnswer(root, `touch -r ${dir} times && ${plant(dir, outside)} && touch -r times ${dir}`);
    expect(answer).toContain('planted');
    expect(answer).toMatch(/\nsandbox: new git metadata d17\/e23\/\.git was renamed to d17\/e23\/\.git\.untrusted-[0-9a-f]{6}/);
    expect(existsSync(join(root, dir, '.git'))).toBe(false);
    hostGitStatus(join(root, dir));
    expect(readdirSync(outside)).toEqual([]);
    held.push('a repository planted in a directory the walk had cached, with the directory times set back: renamed, host git status ran nothing');
  });

  it('50,000 empty top-level folders, then a repository planted at zz/r (issue 47 row 1): the walk reaches it, renamed, the host’s git status runs nothing', async () => {
    const { root, outside } = places();
    // One mkdir with every name: the folders cost the command a second, not the test minutes.
    const answer = await execAnswer(root, `mkdir $(seq -f f%g 50000) && ${plant('zz/r', outside)}`);
    expect(answer).toContain('planted');
    expect(readdirSync(root)).toHaveLength(50_001);
    // The walk visits every directory (the bound is far above 50,000): zz/r/.git is found and renamed.
    expect(answer).toMatch(/\nsandbox: new git metadata zz\/r\/\.git was renamed to zz\/r\/\.git\.untrusted-[0-9a-f]{6}: a sandboxed command cannot create a repository/);
    expect(existsSync(join(root, 'zz/r/.git'))).toBe(false);
    hostGitStatus(join(root, 'zz/r'));
    expect(existsSync(join(outside, 'fsmonitor-ran'))).toBe(false);
    expect(readdirSync(outside)).toEqual([]);
    // 50,000 folders take longer to remove than an afterAll hook may run.
    rmSync(root, { recursive: true, force: true });
    held.push('50,000 folders then a planted zz/r: walked whole, zz/r/.git renamed, host git status ran nothing (before: the walk stopped at 50,000 and the fsmonitor ran)');
  }, 600_000);

  it('a workspace past a lowered bound (limits.gitWalkDirectories: 1,000): the command fails closed, nothing of it runs', async () => {
    const { root, outside } = places();
    for (let index = 0; index < 1_000; index++) mkdirSync(join(root, `f${index}`));
    const options: ExecToolsOptions = { limits: { gitWalkDirectories: 1_000 } };
    // the workspace and its 1,000 folders: 1,001 directories, one more than the walk may visit
    // its marker in the workspace (the sandbox's /tmp is its own): absent afterwards means it never ran
    const refused = await runFull(root, `touch ran; ${plant('zz/r', outside)}`, options);
    expect(refused).toEqual({ answer: tooManyBefore('1,000'), code: 'LIMIT_EXCEEDED' });
    expect(existsSync(join(root, 'ran'))).toBe(false);
    expect(existsSync(join(root, 'zz'))).toBe(false);
    expect(readdirSync(outside)).toEqual([]);
    // Control: one folder fewer (1,000 directories, the bound) and the same walk lets the command run.
    rmSync(join(root, 'f0'), { recursive: true });
    expect(await runFull(root, 'touch ran && echo ran', options)).toEqual({ answer: expect.stringMatching(/\nran\n$/), code: undefined });
    expect(existsSync(join(root, 'ran'))).toBe(true);
    held.push('a workspace over limits.gitWalkDirectories: refused with LIMIT_EXCEEDED before anything runs (no marker), at the bound it runs');
  });

  it('a command that grows the workspace past the bound, then plants: its output is withheld and the answer says not to run git there', async () => {
    const { root, outside } = places();
    const { answer, code } = await runFull(root, `mkdir $(seq -f f%g 1200) && ${plant('zz/r', outside)}`, { limits: { gitWalkDirectories: 1_000 } });
    expect({ answer, code }).toEqual({ answer: tooManyAfter('1,000'), code: 'LIMIT_EXCEEDED' });
    // Breadth first, zz/r lies past the 1,000th directory: it was not reached, so it is still live (what the text warns of).
    expect(existsSync(join(root, 'zz/r/.git'))).toBe(true);
    held.push('a command that made 1,200 folders past a bound of 1,000 then planted: answer withheld, LIMIT_EXCEEDED saying the check could not finish and not to run git there');
  });

  it('an invalid limits.gitWalkDirectories is a CONFIG error naming the option', () => {
    const { root } = places();
    for (const value of [0, 1.5, '100']) {
      let error: (Error & { code?: string }) | undefined;
      try {
        execTools({ root, limits: { gitWalkDirectories: value as number } });
      } catch (thrown) {
        error = thrown as Error & { code?: string };
      }
      const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
      expect([error?.code, error?.message]).toEqual(['CONFIG', `execTools: option \`limits.gitWalkDirectories\` must be an integer ≥ 1; got ${shown}`]);
    }
  });

  it('a gitfile pointing at a planted git directory, and a repository planted by a background child after the answer', async () => {
    const { root, outside } = places();
    const exec = execTools({ root, approvalPolicy: 'never', shell: '/bin/sh', processScope: 'session' });
    const harness = await openHarness({ toolMode: 'direct', cwd: root, tools: [...exec] });
    try {
      const gitfile = `mkdir -p linked && git init -q --bare evil && git --git-dir=evil config core.fsmonitor 'touch ${outside}/gitfile-ran' && git --git-dir=evil config core.bare false && echo "gitdir: ../evil" > linked/.git; echo planted`;
      const first = outputText(await harness.step.dispatch(callItem('gitfile', 'exec_command', { cmd: gitfile, yield_time_ms: 20_000 })));
      expect(first).toMatch(/\nsandbox: new git metadata linked\/\.git was renamed to linked\/\.git\.untrusted-[0-9a-f]{6}/);
      hostGitStatus(join(root, 'linked'));
      // Later: a tty command answers first, then plants; its next poll (and its end) catch it.
      const late = await harness.step.dispatch(callItem('late', 'exec_command', { cmd: `sleep 1; mkdir -p later && ${plant('later', outside)}; sleep 1`, tty: true, yield_time_ms: 250 }));
      const id = Number(/session ID (\d+)/.exec(outputText(late))?.[1]);
      expect(id).toBeGreaterThan(0);
      const polled = outputText(await harness.step.dispatch(callItem('poll', 'write_stdin', { session_id: id, chars: '', yield_time_ms: 10_000 })));
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
      const during = outputText(await harness.step.dispatch(callItem('during', 'exec_command', { cmd: 'test -d .git && echo mount-point; mkdir .git/x 2>/dev/null || echo read-only; touch made', yield_time_ms: 20_000 })));
      expect(during).toMatch(/Output:\nmount-point\nread-only\n$/);
      expect(readdirSync(root)).toEqual(['made']);
      const [first, second] = await Promise.all(
        ['sleep 1', 'sleep 2'].map((cmd, index) => harness.step.dispatch(callItem(`c${index}`, 'exec_command', { cmd, yield_time_ms: 20_000 }))),
      );
      expect(outputText(first)).toContain('Process exited with code 0');
      expect(outputText(second)).toContain('Process exited with code 0');
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
      const answer = outputText(await harness.step.dispatch({ type: 'custom_tool_call', call_id: 'p1', name: 'apply_patch', input: patch }));
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
