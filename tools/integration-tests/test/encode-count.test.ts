import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { defineFunctionTool } from '@switchyard/kit';
import { createCodeMode } from '@switchyard/code-mode';
import { connectRuntime, createRemoteRuntime, createStreamTransport, type RuntimePlacement } from '@switchyard/code-mode-runtime/protocol';
import { createSession, type Session } from '@switchyard/session';
import { exec, texts } from './helpers';

const here = dirname(fileURLToPath(import.meta.url));
const runtimePackage = join(here, '..', '..', '..', 'packages', 'code-mode-runtime');
/** Built inside the cell, so neither the exec source nor anything the host logs about it holds it. */
const MARKER = 'pass-thru-needle';

/** A placement onto one real worker process (`src/worker.ts` from source) with the JSON counter preloaded. */
function countedWorker(countFile: string) {
  const children: ChildProcess[] = [];
  const placement: RuntimePlacement = {
    async acquire(sink) {
      const child = spawn(
        process.execPath,
        ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', 'tsx', '--import', join(here, 'fixtures', 'json-counter.mjs'), join(runtimePackage, 'src', 'worker.ts')],
        { cwd: runtimePackage, stdio: ['pipe', 'pipe', 'inherit'], env: { PATH: process.env.PATH, JSON_COUNT_MARKER: MARKER, JSON_COUNT_FILE: countFile } },
      );
      children.push(child);
      const transport = createStreamTransport({ readable: child.stdout!, writable: child.stdin! });
      const client = await connectRuntime({ transport, onEvent: (message) => sink.onEvent(message), onLost: (cause) => sink.onLost(cause) });
      return { client, key: 's1', hold: () => () => {}, release: () => {} };
    },
  };
  return { placement, stop: () => children.forEach((child) => child.kill('SIGKILL')) };
}

/** Counts this process's JSON.parse / JSON.stringify calls whose text holds MARKER while installed. */
function countHostJson() {
  const counts = { parse: 0, stringify: 0 };
  const { parse, stringify } = JSON;
  JSON.parse = ((text: string, reviver?: never) => {
    if (typeof text === 'string' && text.includes(MARKER)) counts.parse++;
    return parse(text, reviver);
  }) as typeof JSON.parse;
  JSON.stringify = ((value: unknown, replacer?: never, space?: never) => {
    const text = stringify(value, replacer, space);
    if (typeof text === 'string' && text.includes(MARKER)) counts.stringify++;
    return text;
  }) as typeof JSON.stringify;
  return { counts, restore: () => Object.assign(JSON, { parse, stringify }) };
}

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe('a nested call through a worker process is encoded and decoded 4 times in all', () => {
  it('cell encode, the registry\'s one parse, the host\'s one encode of the result, the isolate\'s one parse: the worker never decodes or re-encodes', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'encode-count-'));
    const countFile = join(folder, 'worker.json');
    const worker = countedWorker(countFile);
    const runtime = createRemoteRuntime({ placement: worker.placement });
    const echo = defineFunctionTool({
      name: 'echo',
      description: 'Echoes its text.',
      parameters: { type: 'object', properties: { v: { type: 'string' } }, required: ['v'] },
      handle: ({ args }: { args: { v: string } }) => ({ echoed: args.v }),
    });
    const session: Session = createSession({ toolMode: 'code-mode-only', tools: [echo], codeMode: createCodeMode({ runtime }) });
    cleanup.push(() => rmSync(folder, { recursive: true, force: true }), () => worker.stop(), () => runtime.shutdown(), () => session.shutdown());
    const turn = session.beginTurn();
    const step = await turn.step();
    await step.dispatch(exec('warm', `text('warm')`));
    const host = countHostJson();
    let out;
    try {
      // `toJSON` runs once per encode of the arguments inside the isolate.
      out = await step.dispatch(
        exec(
          'e1',
          `let encodes = 0;\n` +
            `const v = ['pass', 'thru', 'needle'].join('-') + ' "quoted" é ✓';\n` +
            `const r = await tools.echo({ toJSON() { encodes++; return { v }; } });\n` +
            `text(String(r.echoed === v) + ' ' + encodes);`,
        ),
      );
    } finally {
      host.restore();
    }
    expect(texts(out).slice(1)).toEqual(['true 1']);
    // The host: the registry's validation parses the arguments' text, the result is encoded once.
    expect(host.counts).toEqual({ parse: 1, stringify: 1 });
    // The worker's main thread passes both texts on as they are.
    expect(JSON.parse(readFileSync(countFile, 'utf8'))).toEqual({ parse: 0, stringify: 0 });
    await turn.end();
  });
});
