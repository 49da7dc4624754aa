// list_mcp_resources and read_mcp_resource against real MCP servers (the fixture server offering
// paginated resources), through the registry's real dispatch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, executor, fixtureServer, functionOutputText } from '../test/helpers';
import { mcpTools, type McpTools } from './mcp-tools';

const HEADER = /^Wall time: \d+\.\d{4} seconds\nOutput:\n/;
const RED_DOT = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

const item = (server: string, index: number) => ({ server, uri: `fixture://item/${index}`, name: `item ${index}`, mimeType: 'text/plain' });

/** Generous: four servers start at once on a busy two-core machine. */
const STARTUP = { startupTimeoutMs: 60_000 };

let mcp: McpTools;

beforeAll(async () => {
  mcp = await mcpTools({
    servers: {
      paged: fixtureServer({ FIXTURE_RESOURCES: '5', FIXTURE_RESOURCE_PAGE_SIZE: '2' }, STARTUP),
      single: fixtureServer({ FIXTURE_RESOURCES: '1' }, STARTUP),
      endless: fixtureServer({ FIXTURE_RESOURCES: '25', FIXTURE_RESOURCE_PAGE_SIZE: '1' }, STARTUP),
      plain: fixtureServer({}, STARTUP),
    },
  });
  expect(mcp.servers().map((server) => server.state)).toEqual(['ready', 'ready', 'ready', 'ready']);
}, 90_000);
afterAll(() => mcp.close());

async function list(args: object) {
  const { output, item: wire, payload } = await call(executor(mcp, 'list_mcp_resources'), args as never);
  return { text: functionOutputText(wire), result: output.codeModeResult(payload) as { structuredContent: { resources: unknown[]; nextCursor?: string }; isError: boolean } };
}

describe('list_mcp_resources', () => {
  it('without a server: every page of every server with resources, each tagged with its server, at most 20 pages a server', async () => {
    const { text, result } = await list({});
    expect(result.isError).toBe(false);
    const resources = result.structuredContent.resources;
    expect(resources.slice(0, 6)).toEqual([item('paged', 0), item('paged', 1), item('paged', 2), item('paged', 3), item('paged', 4), item('single', 0)]);
    expect(resources.slice(6)).toEqual(Array.from({ length: 20 }, (_, index) => item('endless', index)));
    expect(result.structuredContent).not.toHaveProperty('nextCursor');
    expect(text.replace(HEADER, '')).toBe(JSON.stringify([{ type: 'text', text: JSON.stringify(result.structuredContent) }]));
  });

  it('with a server: one page and its nextCursor, which the caller pages on', async () => {
    const first = await list({ server: 'paged' });
    expect(first.result.structuredContent).toEqual({ resources: [item('paged', 0), item('paged', 1)], nextCursor: '2' });
    const second = await list({ server: 'paged', cursor: '2' });
    expect(second.result.structuredContent).toEqual({ resources: [item('paged', 2), item('paged', 3)], nextCursor: '4' });
    const last = await list({ server: 'paged', cursor: '4' });
    expect(last.result.structuredContent).toEqual({ resources: [item('paged', 4)] });
  });

  it('refuses a cursor without a server and names the servers with resources for an unknown one', async () => {
    await expect(list({ cursor: '2' })).rejects.toThrow(/^list_mcp_resources: `cursor` needs `server`$/);
    await expect(list({ server: 'plain' })).rejects.toThrow(/^unknown MCP server "plain"; servers with resources: `paged`, `single`, `endless`$/);
  });
});

describe('read_mcp_resource', () => {
  const read = async (args: object) => {
    const { output, item: wire } = await call(executor(mcp, 'read_mcp_resource'), args as never);
    return { success: output.success, body: functionOutputText(wire).replace(HEADER, '') };
  };

  it('gives text as text, an image blob as an image and another blob as a one-line note', async () => {
    expect(await read({ server: 'single', uri: 'fixture://item/0' })).toEqual({ success: true, body: '[{"type":"text","text":"contents of fixture://item/0"}]' });
    const image = await call(executor(mcp, 'read_mcp_resource'), { server: 'single', uri: 'fixture://image' });
    expect((image.item as { output: unknown }).output).toEqual(expect.arrayContaining([{ type: 'input_image', image_url: `data:image/png;base64,${RED_DOT}` }]));
    expect(await read({ server: 'single', uri: 'fixture://bin' })).toEqual({
      success: true,
      body: '[{"type":"text","text":"[binary resource fixture://bin: application/octet-stream, about 9 bytes, not shown]"}]',
    });
    expect(await read({ server: 'paged', uri: 'fixture://both' })).toEqual({
      success: true,
      body: '[{"type":"text","text":"one"},{"type":"text","text":"[binary resource fixture://both: application/pdf, about 3 bytes, not shown]"}]',
    });
  });

  it('refuses a missing uri or an unknown server; a server failure becomes an error result', async () => {
    await expect(read({ server: 'single' })).rejects.toThrow(/^invalid arguments for read_mcp_resource: arguments.uri is required$/);
    await expect(read({ server: 'single', uri: '' })).rejects.toThrow(/^read_mcp_resource needs a string `uri`$/);
    await expect(read({ server: 'nope', uri: 'fixture://item/0' })).rejects.toThrow(/^unknown MCP server "nope"; servers with resources: `paged`, `single`, `endless`$/);
    const failed = await read({ server: 'single', uri: 'fixture://missing' });
    expect(failed.success).toBe(false);
    expect(failed.body).toBe('[{"type":"text","text":"resource request error: MCP error -32603: no resource fixture://missing"}]');
  });
});
