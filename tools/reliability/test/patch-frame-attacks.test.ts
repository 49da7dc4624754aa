import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { running } from '@switchyard/config/proc';
import { applyPatchTool } from '@switchyard/tool-apply-patch';
import { FrameReader, HelperFrameError, encodeFrame, type HelperFrameProblem } from '../../../packages/tool-apply-patch/src/helper-frames';
import { FROM_HELPER, FROM_HOST, type HelperToHost, type HostToHelper } from '../../../packages/tool-apply-patch/src/helper-messages';
import { decodeSeed, decodeVerified, encodeSeed, encodeVerified } from '../../../packages/tool-apply-patch/src/helper-protocol';
import type { ApplyPatchResult } from '../../../packages/tool-apply-patch/src/verify-patch';
import { report } from '../src/profile';
import { openHarness, texts } from './helpers';

// The apply_patch helper protocol's codec (one message table, one frame reader), attacked from
// the helper's side: a helper process that answers a patch with a frame breaking the protocol.
// Each must end the call with its stated error, stop that helper (the session's next patch gets
// a new one), never tell the helper to commit, write nothing, and leave the host running.
const scratch = mkdtempSync(join(tmpdir(), 'reliability-patch-frames-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const held: string[] = [];
afterAll(() => report('patch frame attacks', `${held.length} attacks failed:\n  - ${held.join('\n  - ')}`));

const hash = 'ab'.repeat(32);
const SHA_OTHER = 'cd'.repeat(32);

/** Every message of both directions, with the blobs its indices name (every variant of every kind at least once). */
const HOST_SAMPLES: Array<[HostToHelper, string[]]> = [
  [
    {
      t: 'apply',
      patch: 0,
      root: '/w',
      allowOutsideRoot: false,
      protectedNames: ['.git', '.hg'],
      limits: { maxFileBytes: 1, maxFileLines: 2, maxPatchBytes: 3, maxTotalBytes: 4, maxFiles: 5 },
      turn: { token: 'turn-1', seed: [{ kind: 'text', path: '/w/a', text: 1 }, { kind: 'text', path: '/w/gone', text: null }, { kind: 'hash', path: '/w/big', hash }, { kind: 'hash', path: '/w/none', hash: null }] },
    },
    ['*** Begin Patch\n*** End Patch', 'baseline text\n'],
  ],
  [{ t: 'apply', patch: 0, root: '/w', allowOutsideRoot: true }, ['patch']],
  [{ t: 'commit' }, []],
  [{ t: 'abort' }, []],
];
const HELPER_SAMPLES: Array<[HelperToHost, string[]]> = [
  [
    {
      t: 'verified',
      summary: 'Success. Updated the following files:\nA a\nM b\nD c\n',
      added: ['a'],
      modified: ['b'],
      deleted: ['c'],
      changes: [
        { kind: 'add', path: '/w/a', content: 0, unifiedDiff: 1 },
        { kind: 'delete', path: '/w/c', content: 2, unifiedDiff: 1, contentOmitted: true },
        { kind: 'update', path: '/w/b', movePath: '/w/b2', newContent: 0, unifiedDiff: 1 },
      ],
      files: [
        { path: '/w/a', displayPath: 'a', before: null, after: 0, diff: 1 },
        { path: '/w/c', displayPath: 'c', before: null, after: null, hashes: { before: hash, after: null } },
      ],
      turnFiles: [
        { path: '/w/a', displayPath: 'a', diff: 1, sequence: false, changed: true, baseline: { kind: 'text', text: null } },
        { path: '/w/b', displayPath: 'b', diff: 1, sequence: true, changed: true, baseline: { kind: 'hash', hash: SHA_OTHER } },
        { path: '/w/d', displayPath: 'd', diff: 2, sequence: false, changed: false },
      ],
    },
    ['new\n', 'diff text\n', ''],
  ],
  [{ t: 'committed' }, []],
  [{ t: 'error', code: 'WRITE_FAILED', message: 'disk full', unrestoredPaths: ['/w/a'] }, []],
  [{ t: 'error', code: 'INVALID_HUNK', message: 'invalid hunk at line 2' }, []],
];

/** Decodes `bytes` fed in chunks of `size`. */
function readAll<M>(reader: FrameReader<M>, bytes: Buffer, size: number) {
  const frames = [];
  for (let at = 0; at < bytes.length; at += size) frames.push(...reader.push(bytes.subarray(at, at + size)));
  return frames;
}

describe('the apply_patch helper codec', () => {
  it('round-trips every message of both directions, whole and split into 1- and 7-byte chunks', () => {
    const cases: Array<[typeof FROM_HOST | typeof FROM_HELPER, Array<[HostToHelper | HelperToHost, string[]]>]> = [
      [FROM_HOST, HOST_SAMPLES],
      [FROM_HELPER, HELPER_SAMPLES],
    ];
    for (const [direction, samples] of cases) {
      const bytes = Buffer.concat(samples.flatMap(([message, blobs]) => encodeFrame(message, blobs.map((blob) => Buffer.from(blob)))));
      for (const size of [bytes.length, 7, 1]) {
        const frames = readAll(new FrameReader<unknown>(direction as never, 1024 * 1024), bytes, size);
        expect(frames.map(({ message, blobs }) => ({ message, blobs: blobs.map(String) }))).toEqual(
          samples.map(([message, blobs]) => ({ message: { ...message, blobs: blobs.map((blob) => Buffer.byteLength(blob)) }, blobs })),
        );
      }
    }
    expect(new Set(HOST_SAMPLES.map(([message]) => message.t))).toEqual(new Set(['apply', 'commit', 'abort']));
    expect(new Set(HELPER_SAMPLES.map(([message]) => message.t))).toEqual(new Set(['verified', 'committed', 'error']));
  });

  it('a verified result and a turn seed decode to what was encoded (texts, hashes, baselines)', () => {
    const result: ApplyPatchResult = {
      summary: 'Success.',
      added: ['a'],
      modified: ['b'],
      deleted: [],
      changes: [
        { kind: 'add', path: '/w/a', content: 'a\n', unifiedDiff: '@@ a' },
        { kind: 'update', path: '/w/b', movePath: '/w/c', newContent: 'b2\n', unifiedDiff: '@@ b' },
      ],
      files: [
        { path: '/w/a', displayPath: 'a', before: null, after: 'a\n' },
        { path: '/w/b', displayPath: 'b', before: 'b\n', after: 'b2\n' },
      ],
    };
    const { message, blobs } = encodeVerified(result);
    const [frame] = new FrameReader(FROM_HELPER, 1024 * 1024).push(Buffer.concat(encodeFrame(message, blobs)));
    const decoded = decodeVerified(frame.message as Extract<HelperToHost, { t: 'verified' }>, frame.blobs);
    expect(JSON.parse(JSON.stringify(decoded.changes))).toEqual(result.changes);
    expect(decoded.files.map(({ path, before, after }) => ({ path, before, after }))).toEqual(result.files.map(({ path, before, after }) => ({ path, before, after })));
    const seeded = encodeSeed(new Map<string, { text: Buffer | null } | { hash: string | null }>([['/w/a', { text: Buffer.from('x\n') }], ['/w/b', { text: null }], ['/w/c', { hash }]]), 1);
    const request: HostToHelper = { t: 'apply', patch: 0, root: '/w', allowOutsideRoot: false, turn: { token: 't', seed: seeded.seed } };
    const [sent] = new FrameReader(FROM_HOST, 1024 * 1024).push(Buffer.concat(encodeFrame(request, [Buffer.from('patch'), ...seeded.blobs])));
    const seed = (sent.message as Extract<HostToHelper, { t: 'apply' }>).turn?.seed ?? [];
    expect([...decodeSeed(seed, sent.blobs)]).toEqual([['/w/a', { text: 'x\n' }], ['/w/b', { text: null }], ['/w/c', { hash }]]);
  });
});

/**
 * The rogue helper: it records its pid, waits for the `apply` frame, then writes `payload`
 * (base64) and exits (`exit`) or stays (`stay`); it logs every byte the host sent, so a test can
 * check that the host never said `commit`.
 */
const ROGUE = String.raw`
const fs = require('node:fs');
const [payload, after, log] = process.argv.slice(1);
fs.appendFileSync(log, 'pid ' + process.pid + '\n');
let sent = false;
process.stdin.on('data', (chunk) => {
  fs.appendFileSync(log, chunk.toString('latin1'));
  if (sent) return;
  sent = true;
  process.stdout.write(Buffer.from(payload, 'base64'), () => { if (after === 'exit') process.exit(0); });
});
process.stdin.on('end', () => process.exit(0));
setInterval(() => {}, 1000);
`;

const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const verifiedHeader = { t: 'verified', summary: 'Success.', added: ['x.txt'], modified: [], deleted: [], changes: [], files: [] };

/** The corpus: a name, the bytes the rogue answers with, whether it exits after them, the problem, and the stated text. */
const CORPUS: Array<{ name: string; payload: Buffer; after: 'exit' | 'stay'; problem: HelperFrameProblem; text: RegExp }> = [
  { name: 'truncated header', payload: Buffer.from('{"t":"verif'), after: 'exit', problem: 'truncated', text: /^helper stream ended inside a frame: 11 bytes \(no complete header\)$/ },
  {
    name: 'blob shorter than announced',
    payload: Buffer.concat([Buffer.from(line({ ...verifiedHeader, blobs: [100] })), Buffer.from('0123456789')]),
    after: 'exit',
    problem: 'truncated',
    text: /^helper stream ended inside a frame: 10 bytes of 100 announced blob bytes$/,
  },
  {
    name: 'blob longer than announced',
    payload: Buffer.concat([Buffer.from(line({ ...verifiedHeader, blobs: [3] })), Buffer.from('abcdefghij\n')]),
    after: 'stay',
    problem: 'header-not-json',
    text: /^helper frame header is not JSON \(.+\)$/,
  },
  { name: 'unknown kind', payload: Buffer.from(line({ t: 'explode', blobs: [] })), after: 'stay', problem: 'unknown-message', text: /^unknown helper message "explode"$/ },
  { name: 'prototype kind', payload: Buffer.from(line({ t: '__proto__', blobs: [] })), after: 'stay', problem: 'unknown-message', text: /^unknown helper message "__proto__"$/ },
  { name: 'oversized', payload: Buffer.from(line({ ...verifiedHeader, blobs: [2 ** 50] })), after: 'stay', problem: 'oversized', text: /^helper frame larger than \d+ bytes$/ },
  { name: 'non-JSON header', payload: Buffer.from('hello world\n'), after: 'stay', problem: 'header-not-json', text: /^helper frame header is not JSON \(.+\)$/ },
  { name: 'blobs without header', payload: Buffer.alloc(4096, 0x41), after: 'exit', problem: 'truncated', text: /^helper stream ended inside a frame: 4096 bytes \(no complete header\)$/ },
  { name: 'header not an object', payload: Buffer.from('[1,2]\n'), after: 'stay', problem: 'no-blob-lengths', text: /^helper frame header is not an object with blob lengths \(`blobs`: integer ≥ 0 each\)$/ },
  { name: 'negative blob length', payload: Buffer.from(line({ ...verifiedHeader, blobs: [-1] })), after: 'stay', problem: 'no-blob-lengths', text: /^helper frame header is not an object with blob lengths/ },
  { name: 'field of the wrong kind', payload: Buffer.from(line({ ...verifiedHeader, summary: 1, blobs: [] })), after: 'stay', problem: 'invalid-message', text: /^helper message verified\.summary is not a string$/ },
  {
    name: 'blob index past the frame',
    payload: Buffer.from(line({ ...verifiedHeader, files: [{ path: '/x', displayPath: 'x', before: null, after: 5 }], blobs: [] })),
    after: 'stay',
    problem: 'invalid-message',
    text: /^helper message verified\.files\[0\]\.after is not one of the frame's 0 blobs$/,
  },
  {
    name: 'unknown change kind',
    payload: Buffer.from(line({ ...verifiedHeader, changes: [{ kind: 'chmod', path: '/x' }], blobs: [] })),
    after: 'stay',
    problem: 'invalid-message',
    text: /^helper message verified\.changes\[0\]\.kind is not add, delete or update$/,
  },
  { name: 'forged error code', payload: Buffer.from(line({ t: 'error', code: 'PWNED', message: 'x', blobs: [] })), after: 'stay', problem: 'invalid-message', text: /^helper message error\.code is not one of 10 known values/ },
];

describe('apply_patch helper frame attacks', { timeout: 120_000 }, () => {
  it.each(CORPUS)('$name: the reader states $problem', ({ payload, problem, text }) => {
    const reader = new FrameReader(FROM_HELPER, 64 * 1024 * 1024);
    let error: unknown;
    try {
      reader.push(payload);
      const cut = reader.ended();
      if (cut) throw cut;
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(HelperFrameError);
    expect((error as HelperFrameError).problem).toBe(problem);
    expect((error as Error).message).toMatch(text);
  });

  it(`${CORPUS.length} bad frames from a live helper: each call fails with its stated error, the helper is stopped and replaced, nothing is committed or written, the host lives`, async () => {
    const root = join(scratch, 'workspace');
    mkdirSync(root, { recursive: true });
    let current = CORPUS[0];
    let log = '';
    let calls = 0;
    const tool = applyPatchTool({ wrapHelper: () => ({ file: process.execPath, args: ['-e', ROGUE, current.payload.toString('base64'), current.after, log] }) });
    const harness = await openHarness({ toolMode: 'direct', tools: [tool], cwd: root });
    const pids: number[] = [];
    try {
      for (const attack of CORPUS) {
        current = attack;
        log = join(scratch, `rogue-${++calls}.log`);
        const item = await harness.step.dispatch({ type: 'custom_tool_call', call_id: `frame-${calls}`, name: 'apply_patch', input: '*** Begin Patch\n*** Add File: x.txt\n+pwned\n*** End Patch' });
        const output = texts(item).join('');
        const stated = /^apply_patch helper sent a malformed answer \((.*)\); no file was changed$/s.exec(output);
        expect(stated, `${attack.name}: ${output}`).not.toBeNull();
        expect((stated as RegExpExecArray)[1], attack.name).toMatch(attack.text);
        const sent = readFileSync(log, 'latin1');
        const pid = Number(/^pid (\d+)$/m.exec(sent)?.[1]);
        expect(sent, attack.name).toContain('"t":"apply"');
        expect(sent, attack.name).not.toContain('"t":"commit"');
        expect(pids, attack.name).not.toContain(pid);
        pids.push(pid);
        await vi.waitFor(() => expect(running(pid), `${attack.name}: rogue ${pid} still runs`).toBe(false), { timeout: 20_000 });
        expect(readdirSync(root), attack.name).toEqual([]);
        held.push(`${attack.name}: ${(stated as RegExpExecArray)[1].slice(0, 100)}`);
      }
    } finally {
      await harness.close();
    }
    // The host still applies patches with a real helper.
    const control = await openHarness({ toolMode: 'direct', tools: [applyPatchTool()], cwd: root });
    try {
      const item = await control.step.dispatch({ type: 'custom_tool_call', call_id: 'control', name: 'apply_patch', input: '*** Begin Patch\n*** Add File: x.txt\n+fine\n*** End Patch' });
      expect(texts(item).join('')).toMatch(/Success\. Updated the following files:\nA x\.txt/);
    } finally {
      await control.close();
    }
    expect(readFileSync(join(root, 'x.txt'), 'utf8')).toBe('fine\n');
  });
});
