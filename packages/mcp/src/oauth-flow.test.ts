// The OAuth flow end to end against a small protected MCP server in this process (a real SDK
// `Server` behind the SDK's streamable HTTP transport; the authorization server is a few plain
// endpoints): the host's `authorize` gets the PKCE authorization URL, the tokens land in the
// host's store, a second run connects with the stored token without asking, and without
// `authorize` the failure says what is missing. The suite's 24 auth scenarios run in
// tools/integration-tests (mcp-conformance.test.ts).
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, executor, functionOutputText } from '../test/helpers';
import { mcpTools, type McpAuthorizationRequest, type McpOAuthState, type McpWarning } from './index';

const TOKEN = 'token-for-switchyard';
let http: HttpServer;
let base: string;
const tokenRequests: Record<string, string>[] = [];

async function readBody(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) text += (chunk as Buffer).toString('utf8');
  return text;
}

/** A stateless MCP server with one tool, answering one HTTP request. */
async function serveMcp(request: IncomingMessage, response: Parameters<StreamableHTTPServerTransport['handleRequest']>[1], body: string): Promise<void> {
  const server = new Server({ name: 'protected', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'whoami', description: 'Says who you are.', inputSchema: { type: 'object', properties: {} } }] }));
  server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: 'an authorized client' }] }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport);
  await transport.handleRequest(request, response, body ? JSON.parse(body) : undefined);
}

beforeAll(async () => {
  http = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      const path = new URL(request.url ?? '/', base).pathname;
      if (path === '/.well-known/oauth-protected-resource/mcp') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [base] }));
      } else if (path === '/.well-known/oauth-authorization-server') {
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            issuer: base,
            authorization_endpoint: `${base}/authorize`,
            token_endpoint: `${base}/token`,
            registration_endpoint: `${base}/register`,
            response_types_supported: ['code'],
            code_challenge_methods_supported: ['S256'],
            token_endpoint_auth_methods_supported: ['none'],
          }),
        );
      } else if (path === '/register') {
        response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ...JSON.parse(body), client_id: 'client-1', token_endpoint_auth_method: 'none' }));
      } else if (path === '/token') {
        tokenRequests.push(Object.fromEntries(new URLSearchParams(body)));
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: TOKEN, token_type: 'Bearer', expires_in: 3600 }));
      } else if (path === '/mcp' && request.headers.authorization === `Bearer ${TOKEN}`) {
        await serveMcp(request, response, body);
      } else if (path === '/mcp') {
        response.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"` }).end();
      } else {
        response.writeHead(404).end();
      }
    })().catch(() => response.headersSent || response.writeHead(500).end());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
});
afterAll(() => new Promise((resolve) => http.close(resolve)));

describe('OAuth through the host store', () => {
  const saved = new Map<string, McpOAuthState>();
  const store = { load: (server: string) => saved.get(server), save: (server: string, state: McpOAuthState) => void saved.set(server, state) };
  const redirectUrl = 'http://127.0.0.1:1/callback';

  it('asks the host once, exchanges the code with its PKCE verifier and keeps the tokens in the store', async () => {
    const asked: McpAuthorizationRequest[] = [];
    const mcp = await mcpTools({
      servers: { tickets: { url: `${base}/mcp`, startupTimeoutMs: 60_000 } },
      auth: { store, redirectUrl, authorize: async (request) => (asked.push(request), 'code-42') },
    });
    try {
      expect(mcp.servers()[0].state).toBe('ready');
      const { item } = await call(executor(mcp, 'mcp__tickets__whoami'));
      expect(functionOutputText(item)).toContain('an authorized client');
    } finally {
      await mcp.close();
    }
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ server: 'tickets', serverUrl: `${base}/mcp` });
    const url = asked[0].url;
    expect(`${url.origin}${url.pathname}`).toBe(`${base}/authorize`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ client_id: 'client-1', response_type: 'code', code_challenge_method: 'S256', redirect_uri: redirectUrl, resource: `${base}/mcp` });
    expect(tokenRequests).toHaveLength(1);
    expect(tokenRequests[0]).toMatchObject({ grant_type: 'authorization_code', code: 'code-42', client_id: 'client-1', code_verifier: saved.get('tickets')?.codeVerifier });
    expect(saved.get('tickets')).toMatchObject({ tokens: { access_token: TOKEN, token_type: 'Bearer' }, clientInformation: { client_id: 'client-1' } });
  });

  it('a later run connects with the stored token without asking', async () => {
    let asked = 0;
    const mcp = await mcpTools({
      servers: { tickets: { url: `${base}/mcp`, startupTimeoutMs: 60_000 } },
      auth: { store, redirectUrl, authorize: async () => (asked++, 'unused') },
    });
    await mcp.close();
    expect(mcp.warnings).toEqual([]);
    expect(asked).toBe(0);
    expect(tokenRequests).toHaveLength(1);
  });

  it('without `authorize` the failure names the server, the 401 and the missing option', async () => {
    const warnings: McpWarning[] = [];
    const mcp = await mcpTools({
      servers: { tickets: { url: `${base}/mcp`, startupTimeoutMs: 60_000 } },
      auth: { store: { load: () => undefined, save: () => undefined }, redirectUrl },
      onWarning: (warning) => warnings.push(warning),
    });
    await mcp.close();
    expect(warnings.map((warning) => warning.message)).toEqual([
      `MCP server \`tickets\` requires OAuth authorization (HTTP 401 Unauthorized from ${base}): the server needs a user to authorize this client, and \`auth.authorize\` is not set`,
    ]);
  });
});
