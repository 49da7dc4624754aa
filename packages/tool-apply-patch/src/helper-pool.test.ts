import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepContext, SwitchyardEvent, ToolExecutor } from '@switchyard/protocol';
import { createToolHarness } from '@switchyard/registry/testing';
import { applyPatchTool } from './apply-patch-tool';
import { workspaceFolders, wrap } from './test-support';

let base: string;
let root: string;

beforeEach(async () => ({ base, root } = await workspaceFolders('apply-patch-pool-')));
afterEach(() => rm(base, { recursive: true, force: true }));

/**
 * One call through the registry, as a session makes it; `onEvent` sees each notification as it is
 * emitted. Resolves with the model's text; a failure rejects with the model-visible error.
 */
async function applyVia(tool: ToolExecutor, patch: string, step: Partial<StepContext>, onEvent: (event: SwitchyardEvent) => void = () => undefined): Promise<string> {
  const harness = createToolHarness(tool, { step, hooks: false });
  harness.router.on('tool-notification', onEvent);
  try {
    const result = await harness.call({ kind: 'custom', input: patch });
    if (result.error) throw result.error;
    const body = (result.output as { body?: unknown }).body;
    return typeof body === 'string' ? body : JSON.stringify(body);
  } finally {
    harness.dispose();
  }
}

/** The live apply_patch helper processes this process started (from /proc: parent pid and command line). */
function helperPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || Number(fields[1]) !== process.pid) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('apply-patch-helper')) pids.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return pids.sort((a, b) => a - b);
}

// From source every helper start goes through tsx: seconds on a loaded machine.
describe('the long-lived apply_patch helper', { timeout: 120_000 }, () => {
  it('serves a session\'s patches from one process; two sessions never share one; dispose ends a session\'s helper', async () => {
    const tool = applyPatchTool();
    const alpha = { cwd: root, sessionId: 'alpha' };
    const beta = { cwd: root, sessionId: 'beta' };
    try {
      expect(helperPids()).toEqual([]);
      await applyVia(tool, wrap('*** Add File: a1.txt', '+a'), alpha);
      const [alphaPid] = helperPids();
      await applyVia(tool, wrap('*** Add File: a2.txt', '+a'), alpha);
      // The second patch of the session is a message to the same process.
      expect(helperPids()).toEqual([alphaPid]);
      await applyVia(tool, wrap('*** Add File: b1.txt', '+b'), beta);
      const both = helperPids();
      expect(both).toHaveLength(2);
      const betaPid = both.find((pid) => pid !== alphaPid) as number;
      await applyVia(tool, wrap('*** Add File: b2.txt', '+b'), beta);
      await applyVia(tool, wrap('*** Add File: a3.txt', '+a'), alpha);
      expect(helperPids()).toEqual(both);
      expect((await readdir(root)).sort()).toEqual(['a1.txt', 'a2.txt', 'a3.txt', 'b1.txt', 'b2.txt']);
      // Session alpha ends: its helper is gone, beta's still serves beta.
      await tool.dispose?.({ sessionId: 'alpha' });
      expect(helperPids()).toEqual([betaPid]);
      await applyVia(tool, wrap('*** Add File: b3.txt', '+b'), beta);
      expect(helperPids()).toEqual([betaPid]);
    } finally {
      await tool.dispose?.({ sessionId: 'alpha' });
      await tool.dispose?.({ sessionId: 'beta' });
    }
    expect(helperPids()).toEqual([]);
  });

  it('a helper killed mid-patch changes nothing and leaves nothing half-written; the next call starts a new one and applies', async () => {
    const tool = applyPatchTool();
    const step = { cwd: root, sessionId: 'killed' };
    const files = Array.from({ length: 50 }, (_, index) => `f${String(index).padStart(2, '0')}.txt`);
    await Promise.all(files.map((name) => writeFile(join(root, name), `${name} one\n${name} two\n`)));
    const patch = wrap(...files.flatMap((name) => [`*** Update File: ${name}`, '@@', `-${name} two`, `+${name} TWO`]));
    try {
      await applyVia(tool, wrap('*** Add File: warm.txt', '+w'), step);
      const [first] = helperPids();
      // Killed once the helper holds the verified patch, as the host is about to tell it to write.
      const failure = await applyVia(tool, patch, step, (event) => {
        if (event.type === 'tool-notification' && event.name === 'patch-apply-begin') process.kill(first, 'SIGKILL');
      }).then(
        () => undefined,
        (error: Error) => error.message,
      );
      expect(failure).toMatch(/^apply_patch helper was killed by SIGKILL; /);
      for (const name of files) expect(await readFile(join(root, name), 'utf8')).toBe(`${name} one\n${name} two\n`);
      expect((await readdir(root)).filter((name) => name.includes('.apply-patch.tmp'))).toEqual([]);
      await vi.waitFor(() => expect(helperPids()).toEqual([]), { timeout: 10_000 });
      // The next call works, through a new helper.
      expect(await applyVia(tool, patch, step)).toContain('M f00.txt');
      const [second] = helperPids();
      expect(second).not.toBe(first);
      for (const name of files) expect(await readFile(join(root, name), 'utf8')).toBe(`${name} one\n${name} TWO\n`);
      // Killed while idle: the next call starts another.
      process.kill(second, 'SIGKILL');
      await vi.waitFor(() => expect(helperPids()).toEqual([]), { timeout: 10_000 });
      expect(await applyVia(tool, wrap('*** Add File: after.txt', '+ok'), step)).toMatch(/^Exit code: 0\nWall time: \d+ seconds\nOutput:\nSuccess\. Updated the following files:\nA after\.txt\n$/);
    } finally {
      await tool.dispose?.({ sessionId: 'killed' });
    }
  });
});
