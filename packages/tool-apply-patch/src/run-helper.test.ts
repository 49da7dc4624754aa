import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ApplyPatchError } from './apply-patch-error';
import { applyPatchInHelper, type HelperCommand } from './run-helper';
import type { ApplyPatchResult } from './verify-patch';

// A stand-in for the helper process, speaking the frame protocol badly on purpose: each mode is
// one way a broken or hostile helper can answer. It writes its pid first, so a test can check it
// was stopped. `node -e` puts the extra arguments at argv[1] and on.
const FAKE_HELPER = String.raw`
const [mode, pidFile] = process.argv.slice(1);
require('node:fs').writeFileSync(pidFile, String(process.pid));
const send = (header) => process.stdout.write(JSON.stringify({ ...header, blobs: [] }) + '\n');
const verified = { t: 'verified', summary: 'Success. Updated the following files:\nA x.txt\n', added: ['x.txt'], modified: [], deleted: [], changes: [], files: [] };
let input = '';
let committing = false;
process.stdin.on('data', (chunk) => {
  input += chunk;
  if (committing || !input.includes('"t":"commit"')) return;
  committing = true;
  if (mode === 'commits') send({ t: 'committed' });
  if (mode === 'dies-in-commit') process.exit(1);
});
process.stdin.on('end', () => { if (mode !== 'dies-in-commit' && mode !== 'hangs-in-commit') process.exit(0); });
setInterval(() => {}, 1000);
if (mode === 'header-without-blobs') process.stdout.write('{"t":"verified"}\n');
if (mode === 'committed-first') send({ t: 'committed' });
if (mode === 'verified-malformed') send({ t: 'verified' });
if (mode === 'forged-error') send({ t: 'error', code: 'WRITE_FAILED', message: 'disk full', unrestoredPaths: ['/w/a.txt'] });
if (mode === 'kills-itself') process.kill(process.pid, 'SIGKILL');
if (mode === 'stderr-exit') { process.stderr.write('first line\nthe telling line\n\n'); process.exit(4); }
if (['commits', 'dies-in-commit', 'hangs-in-commit', 'verified-twice'].includes(mode)) send(verified);
if (mode === 'verified-twice') send(verified);
`;

const scratch = mkdtempSync(join(tmpdir(), 'apply-patch-fake-helper-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let runs = 0;

/** Runs applyPatchInHelper against the fake helper in `mode`; resolves with its outcome and the fake's pid. */
async function withFake(mode: string, options: { timeoutMs?: number; signal?: AbortSignal; onVerified?: () => boolean | Promise<boolean> } = {}) {
  const pidFile = join(scratch, `pid-${++runs}`);
  const wrap = (): HelperCommand => ({ file: process.execPath, args: ['-e', FAKE_HELPER, mode, pidFile] });
  const outcome: { result?: ApplyPatchResult; error?: ApplyPatchError } = await applyPatchInHelper('*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch', { root: scratch, wrap, ...options }).then(
    (result) => ({ result }),
    (error: unknown) => ({ error: error as ApplyPatchError }),
  );
  const pid = Number(readFileSync(pidFile, { encoding: 'utf8', flag: 'a+' }) || 0);
  return { ...outcome, pid };
}

/** Whether a process with this pid exists (a zombie, not yet reaped, still does). */
function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('applyPatchInHelper against a broken helper', { timeout: 60_000 }, () => {
  it.each([
    ['header-without-blobs', 'apply_patch helper sent a malformed answer (helper frame header is not an object with blob lengths (`blobs`: integer ≥ 0 each)); no file was changed'],
    ['committed-first', 'apply_patch helper sent an unexpected committed message'],
    ['verified-malformed', 'apply_patch helper sent a malformed answer (helper message verified.summary is not a string); no file was changed'],
    ['verified-twice', 'apply_patch helper sent an unexpected verified message'],
    ['kills-itself', 'apply_patch helper was killed by SIGKILL; no file was changed'],
    ['stderr-exit', 'apply_patch helper exited with code 4: the telling line; no file was changed'],
  ])('%s: HELPER_FAILED with its exact text, the helper stopped', async (mode, message) => {
    const { error, pid } = await withFake(mode, { onVerified: () => new Promise(() => undefined) });
    expect(error).toBeInstanceOf(ApplyPatchError);
    expect({ code: error?.code, message: error?.message }).toEqual({ code: 'HELPER_FAILED', message });
    await vi.waitFor(() => expect(pidExists(pid)).toBe(false), { timeout: 10_000 });
  });

  it('an error frame is passed on as the helper said it (code, message, unrestored paths)', async () => {
    const { error } = await withFake('forged-error');
    expect({ code: error?.code, message: error?.message, unrestoredPaths: error?.unrestoredPaths }).toEqual({ code: 'WRITE_FAILED', message: 'disk full', unrestoredPaths: ['/w/a.txt'] });
  });

  it('a helper that never answers is stopped at the timeout; one that stops while committing may have written', async () => {
    const hangs = await withFake('hangs', { timeoutMs: 300 });
    expect(hangs.error?.message).toBe('apply_patch helper did not finish within 300 ms and was stopped; no file was changed');
    // Long enough for a loaded machine to start the fake and reach the commit.
    const committing = await withFake('hangs-in-commit', { timeoutMs: 10_000 });
    expect(committing.error?.message).toBe('apply_patch helper did not finish within 10000 ms and was stopped; files may have been partly written');
    const dies = await withFake('dies-in-commit');
    expect({ code: dies.error?.code, message: dies.error?.message }).toEqual({ code: 'HELPER_FAILED', message: 'apply_patch helper exited with code 1; files may have been partly written' });
    for (const pid of [hangs.pid, committing.pid].filter(Boolean)) await vi.waitFor(() => expect(pidExists(pid)).toBe(false), { timeout: 10_000 });
  });

  it('commits only when the host says so; an abort or a refusal before the commit writes nothing', async () => {
    const commits = await withFake('commits');
    expect(commits.result?.summary).toBe('Success. Updated the following files:\nA x.txt\n');
    const refused = await withFake('commits', { onVerified: () => false });
    expect({ code: refused.error?.code, message: refused.error?.message }).toEqual({ code: 'ABORTED', message: 'apply_patch was aborted before any file was written' });
    const broken = await withFake('commits', {
      onVerified: () => {
        throw new Error('approval store down');
      },
    });
    expect(broken.error?.message).toBe('approval store down');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const aborted = await withFake('hangs', { signal: controller.signal, timeoutMs: 60_000 });
    expect({ code: aborted.error?.code, message: aborted.error?.message }).toEqual({ code: 'ABORTED', message: 'apply_patch was aborted before any file was written' });
    if (aborted.pid) await vi.waitFor(() => expect(pidExists(aborted.pid)).toBe(false), { timeout: 10_000 });
  });
});
