// OAuth errors and elicitation against real servers: an HTTP server answering 401 / 403 is
// reported as needing authorization (naming the server, the status and what to do); the elicit
// fixture (a real SDK server over stdio) asks for input mid-call, answered by onElicitation, or
// declined (not -32601) without one. The OAuth flows themselves run in the MCP conformance suite
// (tools/integration-tests).
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, executor, functionOutputText } from '../test/helpers';
import { mcpTools, type McpElicitationRequest, type McpWarning } from './index';

const ELICIT_SERVER = fileURLToPath(new URL('../test/fixtures/elicit-server.mjs', import.meta.url));
const elicit = { command: process.execPath, args: [ELICIT_SERVER], startupTimeoutMs: 60_000 };

let http: Server;
let base: string;
beforeAll(async () => {
  http = createServer((request, response) => {
    request.resume();
    if (request.url === '/forbidden') {
      response.writeHead(403, { 'content-type': 'text/plain' }).end('members only');
      return;
    }
    response.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"` }).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
});
afterAll(() => new Promise((resolve) => http.close(resolve)));

/** The start-failure warning of a server. */
async function startWarning(url: string): Promise<McpWarning> {
  const warnings: McpWarning[] = [];
  const mcp = await mcpTools({ servers: { tickets: { url } }, onWarning: (warning) => warnings.push(warning) });
  await mcp.close();
  expect(mcp.servers()[0]).toMatchObject({ name: 'tickets', state: 'closed' });
  expect(warnings).toHaveLength(1);
  return warnings[0];
}

describe('MCP servers behind authorization', () => {
  it('a 401 without `auth` says OAuth is required, naming the server, the status and the fix', async () => {
    const warning = await startWarning(`${base}/mcp`);
    expect(warning).toEqual({
      kind: 'server-failed',
      server: 'tickets',
      message: `MCP server \`tickets\` requires OAuth authorization (HTTP 401 Unauthorized from ${base}); pass \`auth\` to mcpTools (a token store and \`authorize\`) to sign in, or an \`Authorization\` header through \`headers\` / \`bearerTokenEnvVar\``,
    });
  });

  it('a 403 is reported as refused access with the server body', async () => {
    const warning = await startWarning(`${base}/forbidden`);
    expect(warning.message).toBe(`MCP server \`tickets\` refused access (HTTP 403 Forbidden from ${base}): members only`);
  });

  it('a bad `auth` option is a CONFIG error naming it', async () => {
    await expect(mcpTools({ servers: {}, auth: { store: 'memory' } as never })).rejects.toThrow(/^mcpTools: option `auth\.store` must be an object; got "memory"$/);
    await expect(mcpTools({ servers: {}, auth: { store: { load: () => undefined, save: () => undefined }, authorise: () => '' } as never })).rejects.toThrow(/^mcpTools: unknown option `auth\.authorise`; did you mean `auth\.authorize`\?$/);
  });
});

describe('elicitation', () => {
  it('goes to onElicitation (form mode, with server and schema); the SDK fills in schema defaults', async () => {
    const requests: Array<Omit<McpElicitationRequest, 'signal'>> = [];
    const mcp = await mcpTools({
      servers: { asker: elicit },
      onElicitation: async ({ signal, ...request }) => {
        requests.push(request);
        expect(signal.aborted).toBe(false);
        return { action: 'accept', content: { colour: 'blue' } };
      },
    });
    try {
      const { item } = await call(executor(mcp, 'mcp__asker__ask'), {});
      expect(JSON.parse(JSON.parse(functionOutputText(item).split('Output:\n')[1])[0].text)).toEqual({ action: 'accept', content: { colour: 'blue', size: 3 } });
      expect(requests).toEqual([
        {
          server: 'asker',
          mode: 'form',
          message: 'Which colour?',
          requestedSchema: { type: 'object', properties: { colour: { type: 'string', enum: ['red', 'blue'] }, size: { type: 'integer', default: 3 } }, required: ['colour'] },
        },
      ]);
    } finally {
      await mcp.close();
    }
  });

  it('URL mode reaches the host with the url and elicitation id', async () => {
    const requests: Array<Omit<McpElicitationRequest, 'signal'>> = [];
    const mcp = await mcpTools({ servers: { asker: elicit }, onElicitation: async ({ signal: _signal, ...request }) => (requests.push(request), { action: 'cancel' }) });
    try {
      const { item } = await call(executor(mcp, 'mcp__asker__ask'), { mode: 'url' });
      expect(functionOutputText(item)).toContain(JSON.stringify(JSON.stringify({ action: 'cancel' })).slice(1, -1));
      expect(requests).toEqual([{ server: 'asker', mode: 'url', message: 'Sign in to the ticket system.', url: 'https://tickets.example.com/connect', elicitationId: 'el-1' }]);
    } finally {
      await mcp.close();
    }
  });

  it('without onElicitation the server gets a decline, not -32601', async () => {
    const mcp = await mcpTools({ servers: { asker: elicit } });
    try {
      const { item, output } = await call(executor(mcp, 'mcp__asker__ask'), {});
      expect(output.success).not.toBe(false);
      expect(functionOutputText(item)).toContain(JSON.stringify(JSON.stringify({ action: 'decline' })).slice(1, -1));
      expect(functionOutputText(item)).not.toContain('-32601');
    } finally {
      await mcp.close();
    }
  });

  it('a throwing onElicitation declines and is reported as an elicitation-failed warning', async () => {
    const warnings: McpWarning[] = [];
    const mcp = await mcpTools({
      servers: { asker: elicit },
      onWarning: (warning) => warnings.push(warning),
      onElicitation: async () => {
        throw new Error('no user here');
      },
    });
    try {
      const { item } = await call(executor(mcp, 'mcp__asker__ask'), {});
      expect(functionOutputText(item)).toContain(JSON.stringify(JSON.stringify({ action: 'decline' })).slice(1, -1));
      expect(warnings).toEqual([{ kind: 'elicitation-failed', server: 'asker', message: 'MCP server `asker`: onElicitation threw: no user here; declined' }]);
    } finally {
      await mcp.close();
    }
  });
});
