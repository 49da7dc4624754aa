// The README's first example, run as written (only its package import is pointed at this
// package's source, and OPENAI_BASE_URL at a loopback server) against the stream of a reasoning
// model under `store: false`, in the shapes of the official `openai` package's types.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { closeReplayServers, startReplayServer } from '../test/replay-server';
import { assistantMessage, makeUsage, ndjson, reasoningResponse, streamed } from '../test/sdk-responses';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  vi.restoreAllMocks();
  await closeReplayServers();
});

/** The README's first `ts` block. */
function firstExample(): string {
  const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no ts block');
  return block;
}

describe("the README's example", () => {
  it('runs two requests with a reasoning model and store: false; the second sends the reasoning item back with its encrypted_content', async () => {
    const example = firstExample();
    expect(example).toMatch(/store: false/);
    expect(example).toMatch(/reasoning: \{/);
    const first = reasoningResponse('resp_readme_1', assistantMessage('msg_1', 'Hi!'), makeUsage(320, 0, 96, 80));
    const second = reasoningResponse('resp_readme_2', assistantMessage('msg_2', 'Salut !'), makeUsage(430, 256, 70, 60));
    const server = await startReplayServer([streamed(first.events), streamed(second.events)]);

    const dir = mkdtempSync(join(tmpdir(), 'switchyard-openai-readme-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'example.ts');
    writeFileSync(file, example.replace("from '@switchyard/openai'", `from ${JSON.stringify(join(packageDir, 'src', 'index.ts'))}`));
    vi.stubEnv('OPENAI_API_KEY', 'sk-readme');
    vi.stubEnv('OPENAI_BASE_URL', `${server.url}/v1`);
    cleanups.push(() => vi.unstubAllEnvs());
    const printed: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void printed.push(`${args.join(' ')}\n`));

    await import(pathToFileURL(file).href);

    expect(server.requests).toHaveLength(2);
    const [body1, body2] = server.requests.map((request) => JSON.parse(request.body) as Record<string, unknown> & { input: Array<Record<string, unknown>> });
    expect(body1).toMatchObject({ model: 'gpt-5.1-codex', store: false, include: ['reasoning.encrypted_content'], reasoning: { effort: 'medium', summary: 'auto' } });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-readme');
    // the second request carries the first answer's reasoning with its encrypted_content (not by id alone) and the message
    expect(body2.input).toEqual([
      { type: 'message', role: 'user', content: 'Say hi.' },
      first.reasoning,
      assistantMessage('msg_1', 'Hi!'),
      { type: 'message', role: 'user', content: 'Now say it in French.' },
    ]);
    expect(body2.input[1]!.encrypted_content).toBe('gAAAAB-resp_readme_1');
    // what it printed: the text, and each response's totals as the SDK's own accumulator reads them
    const sdk = await Promise.all([first.events, second.events].map((events) => ResponseStream.fromReadableStream(ndjson(events)).finalResponse()));
    expect(printed.join('')).toBe(
      sdk.map((response, index) => `${['Hi!', 'Salut !'][index]}\ntokens: ${response.usage!.total_tokens} (reasoning ${response.usage!.output_tokens_details.reasoning_tokens})\n`).join(''),
    );
    expect(printed.join('')).toBe('Hi!\ntokens: 416 (reasoning 80)\nSalut !\ntokens: 500 (reasoning 60)\n');
  });
});
