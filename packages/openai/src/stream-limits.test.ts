// Servers that never stop (an endless error body, endless argument deltas, only keep-alives, a
// single event that never ends) on 127.0.0.1 against both clients with small limits: each attempt
// ends with a MODEL_ERROR naming the bound. The default limits are exercised in child processes
// by tools/reliability/test/interop.test.ts.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelRequestError, type ModelClient } from '@switchyard/protocol';
import { collect, modelRequest, userMessage } from '../test/replay-server';
import { chatCompletions } from './chat-completions';
import { openaiResponses } from './openai-responses';
import type { StreamLimitOptions } from './stream-limits';

type Writer = (response: ServerResponse, next: (chunk: string) => Promise<boolean>) => Promise<void>;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A server that answers every request with `write`, which writes until the client goes away; counts bytes written. */
async function endlessServer(status: number, write: Writer): Promise<{ url: string; written: () => number }> {
  let written = 0;
  const server = createServer((request, response) => {
    request.resume();
    let open = true;
    response.on('close', () => (open = false));
    response.writeHead(status, { 'content-type': status === 200 ? 'text/event-stream' : 'application/json' });
    const next = async (chunk: string) => {
      if (!open) return false;
      written += Buffer.byteLength(chunk);
      if (!response.write(chunk)) await new Promise((resolve) => response.once('drain', resolve).once('close', resolve));
      return open;
    };
    void write(response, next).catch(() => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, written: () => written };
}

const clients: Record<string, (url: string, limits: StreamLimitOptions) => ModelClient> = {
  responses: (url, limits) => openaiResponses({ baseURL: url, model: 'm', maxAttempts: 1, ...limits }),
  chat: (url, limits) => chatCompletions({ baseURL: url, model: 'm', maxAttempts: 1, ...limits }),
};

const argumentDelta = {
  responses: (index: number) => `data: ${JSON.stringify({ type: 'response.function_call_arguments.delta', item_id: `fc_${index % 16}`, delta: 'x'.repeat(1000) })}\n\n`,
  chat: (index: number) =>
    `data: ${JSON.stringify({ id: 'c', choices: [{ index: 0, delta: { tool_calls: [{ index: index % 16, id: `call_${index % 16}`, function: { name: 'f', arguments: 'x'.repeat(1000) } }] } }] })}\n\n`,
};

async function streamFailure(client: ModelClient): Promise<{ error: ModelRequestError; ms: number }> {
  const started = performance.now();
  const { error } = await collect(client.stream(modelRequest([], [userMessage])));
  expect(error).toBeInstanceOf(ModelRequestError);
  return { error: error as ModelRequestError, ms: performance.now() - started };
}

describe.each(['responses', 'chat'] as const)('%s client bounds', (kind) => {
  it('an endless HTTP 500 body: reads maxErrorBodyBytes and reports the status', async () => {
    const server = await endlessServer(500, async (_response, next) => {
      while (await next('x'.repeat(16_384)));
    });
    const { error } = await streamFailure(clients[kind](server.url, { maxErrorBodyBytes: 4096 }));
    expect(error.code).toBe('MODEL_ERROR');
    expect(error.message).toMatch(/^model request failed \(HTTP 500\): x{500}/);
    expect(error.status).toBe(500);
    expect(server.written()).toBeLessThan(64 * 1024 * 1024);
  });

  it('endless argument deltas over 16 items: maxResponseChars', async () => {
    const server = await endlessServer(200, async (_response, next) => {
      for (let index = 0; await next(argumentDelta[kind](index)); index++);
    });
    const { error } = await streamFailure(clients[kind](server.url, { maxResponseChars: 200_000 }));
    expect(error).toMatchObject({ code: 'MODEL_ERROR', retryable: false, message: 'model stream exceeded maxResponseChars (200000 characters in one response)' });
  });

  it('endless argument deltas to one item: maxItemChars', async () => {
    const server = await endlessServer(200, async (_response, next) => {
      while (await next(argumentDelta[kind](0)));
    });
    const { error } = await streamFailure(clients[kind](server.url, { maxItemChars: 50_000 }));
    expect(error.message).toBe('model stream exceeded maxItemChars (50000 characters in one item)');
  });

  it('only keep-alives: idleTimeoutMs (retryable), although bytes keep coming', async () => {
    const server = await endlessServer(200, async (_response, next) => {
      while (await next(': keep-alive\n\n')) await new Promise((resolve) => setTimeout(resolve, 20));
    });
    const { error, ms } = await streamFailure(clients[kind](server.url, { idleTimeoutMs: 300 }));
    expect(error).toMatchObject({ code: 'MODEL_ERROR', retryable: true, message: 'model stream idle for idleTimeoutMs (300 ms) without an event' });
    expect(ms).toBeLessThan(30_000);
  });

  it('events that keep coming forever: totalTimeoutMs (not retryable)', async () => {
    const server = await endlessServer(200, async (_response, next) => {
      while (await next(`data: ${JSON.stringify({ type: 'response.in_progress', id: 'c', choices: [] })}\n\n`)) await new Promise((resolve) => setTimeout(resolve, 20));
    });
    const { error } = await streamFailure(clients[kind](server.url, { totalTimeoutMs: 500 }));
    expect(error).toMatchObject({ code: 'MODEL_ERROR', retryable: false, message: 'model request exceeded totalTimeoutMs (500 ms)' });
  });

  it('one event that never ends: maxResponseChars bytes', async () => {
    const server = await endlessServer(200, async (_response, next) => {
      await next('data: {"type":"response.output_text.delta","delta":"');
      while (await next('y'.repeat(16_384)));
    });
    const { error } = await streamFailure(clients[kind](server.url, { maxResponseChars: 100_000 }));
    expect(error.message).toBe('model stream exceeded maxResponseChars (one event over 100000 bytes)');
  });

  it('refuses a limit that is not a positive number, naming the option', () => {
    expect(() => clients[kind]('http://127.0.0.1:1/v1', { idleTimeoutMs: 0 })).toThrow(/idleTimeoutMs/);
  });
});
