// The official MCP conformance suite's server scenarios that apply to `switchyard mcp serve`
// (server-initialize, ping, tools-list), run by the suite's CLI against serve itself: serve speaks
// stdio, so this process relays the suite's streamable HTTP to a fresh serve process per session
// (the SDK's own transports on both sides, messages passed through unchanged). The scenarios left
// out, and why, are in the @switchyard/mcp README ("Conformance").
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const CONFORMANCE_CLI = join(require.resolve('@modelcontextprotocol/conformance/package.json'), '..', 'dist', 'index.js');
const SERVE = fileURLToPath(new URL('../../../packages/cli/test/fixtures/serve.ts', import.meta.url));
const TSX = pathToFileURL(require.resolve('tsx')).href;
const SCENARIOS = ['server-initialize', 'ping', 'tools-list'];

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
  details?: unknown;
}

const sessions = new Map<string, { http: StreamableHTTPServerTransport; serve: StdioClientTransport }>();
let relay: Server;
let url: string;
let output: string;

/** A new session: a serve process and an HTTP transport, relaying every message both ways. */
async function openSession(): Promise<StreamableHTTPServerTransport> {
  const serve = new StdioClientTransport({
    command: process.execPath,
    args: ['--no-node-snapshot', '--conditions=@switchyard/source', '--import', TSX, SERVE, '--cwd', output],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stderr: 'ignore',
  });
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
  output = mkdtempSync(join(tmpdir(), 'switchyard-serve-conformance-'));
  relay = createServer((request, response) => {
    void (async () => {
      const id = request.headers['mcp-session-id'];
      const parsed = request.method === 'POST' ? await body(request) : undefined;
      const known = typeof id === 'string' ? sessions.get(id)?.http : undefined;
      const transport = known ?? (id === undefined && request.method === 'POST' ? await openSession() : undefined);
      if (!transport) {
        response.writeHead(404).end();
        return;
      }
      await transport.handleRequest(request, response, parsed);
    })().catch(() => response.headersSent || response.writeHead(500).end());
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(relay.address() as { port: number }).port}/mcp`;
});

afterAll(async () => {
  await Promise.all([...sessions.values()].map(({ http, serve }) => Promise.all([http.close(), serve.close()])));
  await new Promise((resolve) => relay.close(resolve));
  rmSync(output, { recursive: true, force: true });
});

/** Runs one server scenario with the suite's CLI; the checks it saved. */
function runScenario(scenario: string): Promise<{ code: number | null; text: string; checks: Check[] }> {
  const dir = join(output, 'results', scenario);
  const child = spawn(process.execPath, [CONFORMANCE_CLI, 'server', '--url', url, '--scenario', scenario, '-o', dir], { cwd: output, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return new Promise((resolve) => {
    child.on('close', (code) => {
      const checks: Check[] = [];
      const walk = (at: string): void => {
        for (const entry of readdirSync(at, { withFileTypes: true })) {
          if (entry.isDirectory()) walk(join(at, entry.name));
          else if (entry.name === 'checks.json') checks.push(...(JSON.parse(readFileSync(join(at, entry.name), 'utf8')) as Check[]));
        }
      };
      try {
        walk(dir);
      } catch {
        // no results: the assertions report the CLI's output
      }
      resolve({ code, text, checks });
    });
  });
}

describe('MCP conformance suite, server scenarios against switchyard mcp serve', () => {
  for (const scenario of SCENARIOS) {
    it(scenario, async () => {
      const { code, text, checks } = await runScenario(scenario);
      const failures = checks.filter((check) => check.status === 'FAILURE').map((check) => `${check.id}: ${check.errorMessage ?? JSON.stringify(check.details)}`);
      expect({ failures, passed: checks.some((check) => check.status === 'SUCCESS') }, text).toEqual({ failures: [], passed: true });
      expect(code, text).toBe(0);
    }, 180_000);
  }
});
