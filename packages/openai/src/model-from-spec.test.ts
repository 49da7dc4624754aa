import { afterEach, describe, expect, it } from 'vitest';
import { closeReplayServers, collect, modelRequest, startReplayServer } from '../test/replay-server';
import { modelFromSpec } from './model-from-spec';

afterEach(closeReplayServers);

describe('modelFromSpec', () => {
  it('returns undefined for openai:<model> without OPENAI_API_KEY', () => {
    expect(modelFromSpec('openai:gpt-5.1-codex', {})).toBeUndefined();
  });

  it('builds a Responses client from openai:<model> and the environment', async () => {
    const server = await startReplayServer([{ fixture: 'responses/final-message.sse' }]);
    const client = modelFromSpec('openai:gpt-5.1-codex', { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: `${server.url}/v1` }, { contextWindow: 400_000 });
    expect(client?.capabilities).toEqual({ name: 'gpt-5.1-codex', parallelToolCalls: true, contextWindow: 400_000 });
    const { error } = await collect(client!.stream(modelRequest([], [{ type: 'message', role: 'user', content: 'hi' }])));
    expect(error).toBeUndefined();
    expect(server.requests[0].path).toBe('/v1/responses');
    expect(server.requests[0].headers.authorization).toBe('Bearer sk-env');
    expect(JSON.parse(server.requests[0].body).model).toBe('gpt-5.1-codex');
  });

  it('builds a Chat Completions client from chat:<url>#<model> without credentials', async () => {
    const server = await startReplayServer([{ fixture: 'chat/final-message.sse' }]);
    const client = modelFromSpec(`chat:${server.url}/v1#qwen2.5-coder`, {});
    const { error } = await collect(client!.stream(modelRequest([], [{ type: 'message', role: 'user', content: 'hi' }])));
    expect(error).toBeUndefined();
    expect(server.requests[0].path).toBe('/v1/chat/completions');
    expect(server.requests[0].headers.authorization).toBeUndefined();
    expect(JSON.parse(server.requests[0].body).model).toBe('qwen2.5-coder');
  });

  it('refuses malformed specs with a CONFIG error', () => {
    expect(() => modelFromSpec('claude:opus', {})).toThrow('invalid model spec "claude:opus": expected "openai:<model>" or "chat:<url>#<model>"');
    expect(() => modelFromSpec('chat:http://127.0.0.1:8080/v1', {})).toThrow('invalid model spec "chat:http://127.0.0.1:8080/v1": expected "#<model>" after the URL');
    expect(() => modelFromSpec('chat:localhost:8080#m', {})).toThrow('invalid model spec "chat:localhost:8080#m": "localhost:8080" is not an http(s) URL');
    expect(() => modelFromSpec('openai:', { OPENAI_API_KEY: 'k' })).toThrow(expect.objectContaining({ code: 'CONFIG' }));
  });
});
