import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHookEngine } from '@switchyard/hooks';
import { mcpTools } from '@switchyard/mcp';
import { chatCompletions, openaiResponses } from '@switchyard/openai';
import { createSession } from '@switchyard/session';
import { applyPatchTool } from '@switchyard/tool-apply-patch';
import { execTools } from '@switchyard/tool-exec';
import { configError } from '@switchyard/config/config-error';

// A host's first day in plain JavaScript: a typo in any options object is a CONFIG error naming it.

describe('every options object a host passes is strict', () => {
  it('names the unknown option and the closest valid one', async () => {
    const cases: Array<[() => unknown, string]> = [
      [() => openaiResponses({ model: 'gpt-5', apiKey: 'sk-test', baseUrl: 'http://127.0.0.1:1/v1' } as never), 'openaiResponses: unknown option `baseUrl`; did you mean `baseURL`?'],
      [() => chatCompletions({ baseURL: 'http://127.0.0.1:1/v1', model: 'm', maxAttempt: 2 } as never), 'chatCompletions: unknown option `maxAttempt`; did you mean `maxAttempts`?'],
      [() => createHookEngine({ files: ['hooks.json'] } as never), 'createHookEngine: unknown option `files`; did you mean `configFiles`?'],
      [() => createSession({ tools: [], toolmode: 'code-mode' } as never), 'createSession: unknown option `toolmode`; did you mean `toolMode`?'],
      [() => execTools({ sandboxMode: 'read-only' } as never), 'execTools: unknown option `sandboxMode`; did you mean `sandbox`?'],
      [() => applyPatchTool({ allowOutsideRoots: true } as never), 'applyPatchTool: unknown option `allowOutsideRoots`; did you mean `allowOutsideRoot`?'],
      [() => mcpTools({ server: {} } as never), 'mcpTools: unknown option `server`; did you mean `servers`?'],
      [() => mcpTools({ servers: { fs: { command: 'node', arg: [] } } } as never), 'invalid MCP server configuration:\nservers.fs: unknown option `arg`; did you mean `args`?'],
    ];
    for (const [run, message] of cases) expect(await configError(run)).toBe(message);
  });

  it('names an invalid value', async () => {
    expect(await configError(() => createSession({ tools: [], toolMode: 'codemode' } as never))).toBe(
      'createSession: option `toolMode` must be one of "direct", "code-mode", "code-mode-only"; got "codemode" (did you mean "code-mode"?)',
    );
    expect(await configError(() => execTools({ sandbox: 'readonly' } as never))).toBe(
      'execTools: option `sandbox` must be one of "read-only", "workspace-write", "danger-full-access"; got "readonly" (did you mean "read-only"?)',
    );
    expect(await configError(() => openaiResponses({ model: 'gpt-5', baseURL: 42 } as never))).toBe('openaiResponses: option `baseURL` must be a string; got 42');
    expect(await configError(() => createHookEngine({ configFiles: 'hooks.json' } as never))).toBe('createHookEngine: option `configFiles` must be a list; got "hooks.json"');
  });
});

describe('retries do not multiply', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  });

  it('a model server that stays down costs the client’s attempts, not client × session attempts', async () => {
    let requests = 0;
    server = createServer((request, response) => {
      requests++;
      request.resume();
      response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'overloaded' } }));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const model = openaiResponses({ model: 'gpt-5', baseURL: `http://127.0.0.1:${port}/v1`, maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 5 });
    const session = createSession({ tools: [], retry: { initialDelayMs: 1 } });
    const error = await session.runTurn({ model, input: 'hello' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'MODEL_ERROR', attempts: 3 });
    expect(requests).toBe(3);
    expect(session.history).toEqual([]);
  });
});
