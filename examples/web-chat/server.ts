// The web server: one page, its script, and the chat API — every route is one call into
// @switchyard/ai-sdk. Hono on Node's http server (@hono/node-server); any server whose handlers take a
// `Request` and return a `Response` (Next.js route handlers, Bun, Deno) serves the same three calls.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { createUIChat, type UIChat } from '@switchyard/ai-sdk';
import { build } from 'esbuild';
import { Hono } from 'hono';
import { createAgent, type Agent } from './agent';

const here = dirname(fileURLToPath(import.meta.url));

/** The page's script: `page/app.ts` and the AI SDK's client, bundled for the browser. */
async function bundlePage(): Promise<string> {
  const result = await build({ entryPoints: [join(here, 'page', 'app.ts')], bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'silent' });
  return result.outputFiles[0].text;
}

export interface WebChatServer {
  readonly url: string;
  /** The conversations this server holds, by chat id. */
  readonly chats: ReadonlyMap<string, { agent: Agent; chat: UIChat }>;
  close(): Promise<void>;
}

export async function startWebChatServer(options: { port?: number; approvalTimeoutMs?: number } = {}): Promise<WebChatServer> {
  const script = await bundlePage();
  const html = readFileSync(join(here, 'page', 'index.html'), 'utf8');
  const chats = new Map<string, { agent: Agent; chat: UIChat }>();
  const chatFor = (id: string) => {
    let entry = chats.get(id);
    if (!entry) {
      const agent = createAgent({ approvalTimeoutMs: options.approvalTimeoutMs });
      entry = { agent, chat: createUIChat({ session: agent.session, model: agent.model, approvals: agent.approvals }) };
      chats.set(id, entry);
    }
    return entry.chat;
  };

  const app = new Hono();
  app.get('/', (c) => c.html(html));
  app.get('/app.js', (c) => c.body(script, 200, { 'content-type': 'text/javascript; charset=utf-8' }));
  // the conversation so far, for a page that (re)loads
  app.get('/api/chat/:id/messages', (c) => c.json(chatFor(c.req.param('id')).messages()));
  // a new message, or the answers to approvals: the turn's UI message stream
  app.post('/api/chat/:id', (c) => chatFor(c.req.param('id')).post(c.req.raw));
  // follow the chat: a turn the page has not seen (a background result's wake turn), or 204
  app.get('/api/chat/:id/stream', (c) => chatFor(c.req.param('id')).follow(c.req.raw));

  const server = serve({ fetch: app.fetch, port: options.port ?? 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    chats,
    async close() {
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const { agent, chat } of chats.values()) {
        chat.close();
        await agent.session.shutdown();
      }
    },
  };
}
