// The official MCP conformance suite's server requirements, run by the suite's CLI against
// `switchyard mcp serve` itself, once per protocol family:
// - `--requirements 2025-11-25`: serve speaks stdio, so this process relays the suite's
//   streamable HTTP to a fresh serve process per session (the SDK's own transports on both sides,
//   messages passed through unchanged);
// - `--requirements 2026-07-28` (the Tasks extension's scenarios included: the requirement set runs
//   them unscored): one serve process behind a stateless relay (serve-relay.ts), whose fixture
//   tools are played by Code Mode scripts (serve-fixtures.ts).
// Every failing check must be in the family's baseline (fixtures/serve-baseline-*.yml, each entry
// with its reason, repeated in the @switchyard/mcp README "Conformance"), and every baseline entry
// must still fail. The suite checks that for the scenarios it scores; this test checks it for
// every scenario it ran, the unscored Tasks scenarios included.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFORMANCE_CLI, baselineEntries, requiredScenarios, savedChecks, verdict, type Check } from './conformance-kit';
import { fixtureScript } from './serve-fixtures';
import { startModernRelay, type ModernRelay } from './serve-relay';

const SERVE = fileURLToPath(new URL('../../../packages/cli/test/fixtures/serve.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const baselinePath = (revision: string) => fileURLToPath(new URL(`./fixtures/serve-baseline-${revision}.yml`, import.meta.url));

/** Runs `--requirements <revision>` against `url`; the checks it saved, by scenario. */
function runRequirements(revision: string, url: string, dir: string): Promise<{ code: number | null; text: string; checks: Map<string, Check[]> }> {
  const args = [CONFORMANCE_CLI, 'server', '--url', url, '--requirements', revision, '--expected-failures', baselinePath(revision), '-o', dir];
  const child = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return new Promise((resolve) => {
    child.on('close', (code) => resolve({ code, text, checks: savedChecks(dir) }));
  });
}

let workspace: string;
afterAll(() => {
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});
beforeAll(() => {
  workspace = mkdtempSync(join(tmpdir(), 'switchyard-serve-conformance-'));
});

describe('MCP conformance suite, server requirements of 2025-11-25 against switchyard mcp serve', () => {
  const sessions = new Map<string, { http: StreamableHTTPServerTransport; serve: StdioClientTransport }>();
  let relay: Server;
  let run: Awaited<ReturnType<typeof runRequirements>>;

  /** A serve process over stdio. */
  const serveTransport = () =>
    new StdioClientTransport({
      command: process.execPath,
      args: ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', TSX, SERVE, '--cwd', workspace],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stderr: 'ignore',
    });

  /** A new session: a serve process and an HTTP transport, relaying every message both ways. */
  async function openSession(): Promise<StreamableHTTPServerTransport> {
    const serve = serveTransport();
    const http = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { http, serve }),
    });
    http.onmessage = (message) => void serve.send(message);
    serve.onmessage = (message) => void http.send(message);
    http.onclose = () => void serve.close();
    await serve.start();
    await http.start();
    return http;
  }

  async function body(request: IncomingMessage): Promise<unknown> {
    let text = '';
    for await (const chunk of request) text += (chunk as Buffer).toString('utf8');
    return text ? JSON.parse(text) : undefined;
  }

  beforeAll(async () => {
    relay = createServer((request, response) => {
      void (async () => {
        const id = request.headers['mcp-session-id'];
        const parsed = request.method === 'POST' ? await body(request) : undefined;
        const known = typeof id === 'string' ? sessions.get(id)?.http : undefined;
        const transport = known ?? (id === undefined && request.method === 'POST' ? await openSession() : undefined);
        if (!transport) return void response.writeHead(404).end();
        await transport.handleRequest(request, response, parsed);
      })().catch(() => response.headersSent || response.writeHead(500).end());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    // One serve process started and initialized first: the first start transpiles serve's sources
    // (tsx caches them), which on a loaded machine outlasts the suite's 30 s for a scenario.
    const warm = new Client({ name: 'warm-up', version: '0' });
    await warm.connect(serveTransport(), { timeout: 120_000 });
    await warm.close();
    const dir = mkdtempSync(join(workspace, 'results-2025-'));
    run = await runRequirements('2025-11-25', `http://127.0.0.1:${(relay.address() as { port: number }).port}/mcp`, dir);
  }, 600_000);

  afterAll(async () => {
    await Promise.all([...sessions.values()].map(({ http, serve }) => Promise.all([http.close(), serve.close()])));
    await new Promise((resolve) => relay?.close(resolve));
  });

  it('runs every scenario of the requirement set; only the baseline fails (exit code 0)', () => {
    expect([...run.checks.keys()].sort(), run.text).toEqual(requiredScenarios('2025-11-25', 'server').sort());
    expect(run.code, run.text).toBe(0);
  });

  for (const scenario of requiredScenarios('2025-11-25', 'server')) {
    it(scenario, () => {
      expect(verdict(scenario, run.checks.get(scenario) ?? [], baselineEntries(baselinePath('2025-11-25'))), run.text).toMatchObject({ unexpected: [], stale: [] });
    });
  }
});

describe('MCP conformance suite, server requirements of 2026-07-28 (Tasks extension included) against switchyard mcp serve', () => {
  let relay: ModernRelay;
  let run: Awaited<ReturnType<typeof runRequirements>>;

  beforeAll(async () => {
    relay = await startModernRelay(mkdtempSync(join(workspace, 'serve-2026-')), fixtureScript);
    run = await runRequirements('2026-07-28', relay.url, mkdtempSync(join(workspace, 'results-2026-')));
  }, 600_000);

  afterAll(async () => {
    await relay?.close();
  });

  it('runs every scenario of the requirement set; only the baseline fails (exit code 0)', () => {
    expect([...run.checks.keys()].sort(), run.text).toEqual(requiredScenarios('2026-07-28', 'server').sort());
    expect(run.code, `${run.text}\nserve stderr:\n${relay.stderr()}`).toBe(0);
  });

  for (const scenario of requiredScenarios('2026-07-28', 'server')) {
    it(scenario, () => {
      expect(verdict(scenario, run.checks.get(scenario) ?? [], baselineEntries(baselinePath('2026-07-28'))), run.text).toMatchObject({ unexpected: [], stale: [] });
    });
  }
});
