// A call's timeout stops counting while an elicitation of its server waits for the user, against a
// real server (the elicit fixture over stdio): the call outlives its `toolTimeoutMs` while the
// user takes their time, and still times out when nothing is pending. Margins are wide (the
// machine may be loaded): a 1.5 s timeout against a 5 s answer and a 5 s job.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, executor, functionOutputText } from '../test/helpers';
import { mcpTools, type McpElicitationRequest, type McpTools } from './index';

const ELICIT_SERVER = fileURLToPath(new URL('../test/fixtures/elicit-server.mjs', import.meta.url));
const TIMEOUT_MS = 1500;
const USER_MS = 5000;

describe('a call\'s timeout while an elicitation of its server is pending', () => {
  let mcp: McpTools;
  const asked: McpElicitationRequest[] = [];

  beforeAll(async () => {
    mcp = await mcpTools({
      servers: { desk: { command: process.execPath, args: [ELICIT_SERVER], startupTimeoutMs: 60_000, toolTimeoutMs: TIMEOUT_MS } },
      onElicitation: async (request) => {
        asked.push(request);
        // The user takes their time: well past the call's timeout.
        await new Promise((resolve) => setTimeout(resolve, USER_MS));
        return { action: 'accept', content: { colour: 'blue' } };
      },
    });
  }, 60_000);
  afterAll(() => mcp.close());

  it('the call outlives its timeout while the user answers', async () => {
    const started = Date.now();
    const { output, item } = await call(executor(mcp, 'mcp__desk__ask'), {});
    expect(Date.now() - started).toBeGreaterThanOrEqual(USER_MS);
    expect(output.success).toBe(true);
    expect(functionOutputText(item)).toContain('{\\"action\\":\\"accept\\",\\"content\\":{\\"colour\\":\\"blue\\",\\"size\\":3}}');
    expect(asked.map((request) => request.message)).toEqual(['Which colour?']);
  }, 60_000);

  it('times out when nothing is pending: a job longer than the timeout', async () => {
    const started = Date.now();
    const { output, item } = await call(executor(mcp, 'mcp__desk__work'), { ms: USER_MS });
    expect(Date.now() - started).toBeLessThan(USER_MS);
    expect(output.success).toBe(false);
    expect(functionOutputText(item)).toContain(`tool call error: timed out awaiting tools/call after ${TIMEOUT_MS / 1000}s`);
  }, 60_000);

  it('counts again once the answer is in: work after the reply that runs past the timeout times out', async () => {
    const { output, item } = await call(executor(mcp, 'mcp__desk__ask'), { after_ms: USER_MS });
    expect(output.success).toBe(false);
    expect(functionOutputText(item)).toContain(`tool call error: timed out awaiting tools/call after ${TIMEOUT_MS / 1000}s`);
    expect(asked).toHaveLength(2);
  }, 60_000);
});
