import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyPatchTool } from '@switchyard/tool-apply-patch';
import { invokeTool } from '@switchyard/registry/testing';
import type { ResponseItem } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { report } from '../src/profile';
import { callItem, execItem } from './helpers';
import { concurrencyProbe, countedTool } from '../../../packages/registry/test/support';

// One host serving sessions must keep each model response's cost to that response: a call id used
// twice, output past the call's budget, a turn diff of huge files, a huge patch, a flood of calls.

const finalAnswer: ResponseItem[] = [{ type: 'message', role: 'assistant', content: 'done' }];

describe('host bounds: one model response', () => {
  it('three calls with the same call_id: the tool runs once, history holds one real output and two refusals with that id', async () => {
    const counted = countedTool();
    const model = createScriptedModel([[callItem('dup', 'counted', {}), callItem('dup', 'counted', {}), callItem('dup', 'counted', {})], finalAnswer]);
    const session = createSession({ tools: [counted.tool] });
    try {
      await session.runTurn({ model, input: 'go' });
      expect(counted.runs()).toBe(1);
      const outputs = session.history.filter((item) => item.type === 'function_call_output') as Array<{ call_id: string; output: string }>;
      expect(outputs.map((item) => item.call_id)).toEqual(['dup', 'dup', 'dup']);
      expect(outputs.filter((item) => item.output === '{"run":1}')).toHaveLength(1);
      expect(outputs.slice(1).map((item) => item.output)).toEqual(
        Array(2).fill('duplicate call_id "dup": an earlier call in this response already uses it, so this call was not run; give every call its own call_id'),
      );
      // the next request carries exactly that
      expect(model.requests[1].input.filter((item) => item.type === 'function_call_output')).toHaveLength(3);
      report('host bounds', `3 calls with one call_id: ${counted.runs()} run, 1 real output + 2 refusals`);
    } finally {
      await session.shutdown();
    }
  });
});

describe('host bounds: admission control', () => {
  it('a response with 200 parallel-safe calls never has more than the cap (default 16) running at once; every call answers', async () => {
    const { tool: slow, seen } = concurrencyProbe('slow', 10);
    const calls = Array.from({ length: 200 }, (_, index) => callItem(`c${index}`, 'slow', {}));
    for (const [cap, expected] of [[undefined, 16], [3, 3]] as const) {
      seen.peak = 0;
      seen.done = 0;
      const model = createScriptedModel([calls, finalAnswer]);
      const session = createSession({ tools: [slow], ...(cap ? { maxConcurrentToolCalls: cap } : {}) });
      try {
        await session.runTurn({ model, input: 'go' });
        expect(seen.peak).toBe(expected);
        expect(seen.done).toBe(200);
        const outputs = session.history.filter((item) => item.type === 'function_call_output') as Array<{ call_id: string }>;
        expect(outputs.map((item) => item.call_id)).toEqual(calls.map((item) => (item as { call_id: string }).call_id));
      } finally {
        await session.shutdown();
      }
    }
    report('host bounds', '200 calls in one response: at most 16 running at once by default (3 with maxConcurrentToolCalls: 3), all 200 answered in call order');
  });
});

describe('host bounds: one budget per tool call before anything enters history', () => {
  const requestBytes = (input: readonly ResponseItem[]) => Buffer.byteLength(JSON.stringify(input), 'utf8');

  it('15 × 1M-character notify() items and 15 × 1M-character image() items: the next request stays within the call budget', async () => {
    const notifyCode = `for (let i = 0; i < 15; i++) notify(String(i).repeat(1_000_000));\ntext('notified');`;
    const imageCode = `for (let i = 0; i < 15; i++) image('data:image/png;base64,' + 'A'.repeat(1_000_000));\ntext('drawn');`;
    const model = createScriptedModel([[execItem('notify-flood', notifyCode)], finalAnswer, [execItem('image-flood', imageCode)], finalAnswer]);
    const session = createSession({ toolMode: 'code-mode-only', tools: [], codeMode: { runtimeOptions: { nodeSnapshotCheck: 'ignore' } } });
    try {
      await session.runTurn({ model, input: 'flood with notify' });
      const afterNotify = requestBytes(model.requests[1].input);
      const notified = model.requests[1].input.filter((item) => item.type === 'custom_tool_call_output' && item.call_id === 'notify-flood');
      // the exec's own answer, the first notify cut to the default 10,000-token budget, one note for the dropped 14
      expect(notified).toHaveLength(3);
      const texts = notified.map((item) => JSON.stringify((item as { output: unknown }).output));
      expect(texts.some((text) => text.includes('Warning: truncated output (original token count: 250000)'))).toBe(true);
      expect(texts.some((text) => text.includes("notify() output dropped: this call's output budget of 10000 tokens is used up"))).toBe(true);
      expect(afterNotify).toBeLessThan(100_000);

      await session.runTurn({ model, input: 'flood with images' });
      const afterImages = requestBytes(model.requests[3].input);
      const answer = model.requests[3].input.find((item) => item.type === 'custom_tool_call_output' && item.call_id === 'image-flood') as { output: Array<{ type: string; text?: string }> };
      // an image of 1M characters counts 3,907 tokens: two fit the 10,000-token budget beside the text
      expect(answer.output.filter((part) => part.type === 'input_image')).toHaveLength(2);
      expect(answer.output.map((part) => part.text)).toContain('[omitted 13 image items ...]');
      expect(afterImages - afterNotify).toBeLessThan(10_000 * 256 + 100_000);
      report('host bounds', `15 × 1M-char notify: next request ${afterNotify} bytes; 15 × 1M-char images: next request ${afterImages} bytes (2 images kept, 13 omitted)`);
    } finally {
      await session.shutdown();
    }
    }, 300_000);
});

describe('host bounds: apply_patch answers of many files', () => {
  const addFiles = (count: number) => ['*** Begin Patch', ...Array.from({ length: count }, (_, index) => [`*** Add File: d${index % 50}/f${index}.txt`, `+${index}`]).flat(), '*** End Patch'].join('\n');

  it('5,000 tiny Add Files (~100 KB) apply; 20,001 file sections are refused with a reason the model can act on', async () => {
    const root = mkdtempSync(join(tmpdir(), 'host-bounds-patch-'));
    try {
      const patch = addFiles(5_000);
      const result = await invokeTool(applyPatchTool({ root }), patch, { callId: 'many' });
      const output = (result.item as { output: string }).output;
      expect(output.split('\n').filter((line) => line.startsWith('A '))).toHaveLength(5_000);
      expect(result.success).toBe(true);
      expect(readFileSync(join(root, 'd49/f4999.txt'), 'utf8')).toBe('4999\n');

      const tooMany = await invokeTool(applyPatchTool({ root }), addFiles(20_001).replaceAll('/f', '/g'), { callId: 'too-many' });
      expect((tooMany.item as { output: string }).output).toBe(
        'apply_patch verification failed: the patch has 20001 file sections; apply_patch changes at most 20000 files per patch; split it into smaller patches',
      );
      expect(existsSync(join(root, 'd0/g0.txt'))).toBe(false);
      report('host bounds', `apply_patch of 5,000 Add Files (${Math.round(patch.length / 1024)} KB): applied; 20,001 sections: refused, nothing written`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('host bounds: the turn diff of big files', () => {
  it('five one-line patches to five 60 MB files in one turn: the host (a child process) holds no copies of them', () => {
    const root = mkdtempSync(join(tmpdir(), 'host-bounds-diff-'));
    try {
      // Made by the shell, so this process never holds the 300 MB either; ~120-byte lines stay under 2,000,000 lines.
      const filler = 'filler line of the big file, long enough that sixty megabytes stay well under the two million lines apply_patch edits';
      const made = spawnSync('/bin/sh', ['-c', `for i in 0 1 2 3 4; do { echo 'first line'; yes '${filler}' | head -c 62914560; echo; } > "${root}/f$i.txt"; done`]);
      expect(made.status).toBe(0);
      const fixture = fileURLToPath(new URL('./fixtures/turn-diff-host.ts', import.meta.url));
      const child = spawnSync(process.execPath, ['--expose-gc', '--no-node-snapshot', '--conditions=@switchyard/source', '--import', 'tsx', fixture, root, '5'], {
        encoding: 'utf8',
        timeout: 900_000,
      });
      expect(child.stderr).toBe('');
      expect(child.status).toBe(0);
      const result = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { before: number; after: number; peakMb: number; files: string[]; changed: boolean; diffChars: number; outputs: string[] };
      expect(result.outputs.every((output) => /^Exit code: 0\nWall time: \d+ seconds\nOutput:\nSuccess\. /.test(output))).toBe(true);
      // the turn diff still names every file and its change
      expect(result.files).toEqual(['f0.txt', 'f1.txt', 'f2.txt', 'f3.txt', 'f4.txt']);
      expect(result.changed).toBe(true);
      // whole before/after copies held 5 × 120 MB (87 → 1,093 MB resident); hashes and diffs hold kilobytes
      expect(result.after - result.before).toBeLessThan(100);
      expect(result.peakMb).toBeLessThan(300);
      report('host bounds', `5 one-line patches to 5 × 60 MB files: host RSS ${result.before} → ${result.after} MB after gc, peak ${result.peakMb} MB, turn diff ${result.diffChars} characters`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 900_000);
});
