import {
  RespondToModelError,
  isJsonObject,
  toolName,
  type JsonObject,
  type JsonSchema,
  type JsonValue,
  type ToolExecutor,
  type ToolInvocation,
} from '@switchyard/protocol';
import { invocationArguments } from '@switchyard/kit/internal';
import { McpToolOutput, errorCallToolResult, mcpCallToolResultOutputSchema, type McpCallToolResult } from './call-result';
import type { McpServerConnection } from './server-connection';

/** Name of the tool that reads an MCP resource (a `resource_link` a tool returned, for example). */
export const READ_MCP_RESOURCE = 'read_mcp_resource';
/** Name of the tool that lists the resources of the MCP servers. */
export const LIST_MCP_RESOURCES = 'list_mcp_resources';

const MAX_LIST_PAGES = 20;

/**
 * A resource's contents as content blocks the model can read: text as text, a base64 `image/*`
 * blob as an image, any other blob as a one-line note (its size and type).
 */
function contentsToBlocks(contents: readonly JsonValue[]): JsonValue[] {
  return contents.map((entry): JsonValue => {
    const item = isJsonObject(entry) ? entry : {};
    const uri = typeof item.uri === 'string' ? item.uri : '';
    const mimeType = typeof item.mimeType === 'string' ? item.mimeType : undefined;
    if (typeof item.text === 'string') return { type: 'text', text: item.text };
    if (typeof item.blob === 'string') {
      if (mimeType?.startsWith('image/')) return { type: 'image', data: item.blob, mimeType };
      const bytes = Math.floor((item.blob.length * 3) / 4);
      return { type: 'text', text: `[binary resource ${uri}: ${mimeType ?? 'application/octet-stream'}, about ${bytes} bytes, not shown]` };
    }
    return { type: 'text', text: JSON.stringify(entry) };
  });
}

function resultOf(structured: JsonObject, content: JsonValue[]): McpCallToolResult {
  return { content, structuredContent: structured, isError: false };
}

/** What the resource tools read on every call: the servers that are ready now, and the output budget. */
interface ResourceScope {
  servers: () => readonly McpServerConnection[];
  maxOutputTokens: number | undefined;
}

/**
 * The two resource tools over the ready servers that offer resources: `list_mcp_resources`
 * (`{ server?, cursor? }`) and `read_mcp_resource` (`{ server, uri }`). Failures are error results,
 * like every MCP call. `servers` is read on every call, so a server that failed since is refused.
 */
export function createResourceTools(servers: () => readonly McpServerConnection[], maxOutputTokens: number | undefined): ToolExecutor[] {
  const scope: ResourceScope = { servers, maxOutputTokens };
  return [listResourcesTool(scope), readResourceTool(scope)];
}

const READ_PARAMETERS: JsonSchema = {
  type: 'object',
  properties: {
    server: { type: 'string', description: 'The MCP server name (as in a resource link or `list_mcp_resources`).' },
    uri: { type: 'string', description: 'The resource URI.' },
  },
  required: ['server', 'uri'],
  additionalProperties: false,
};

const LIST_PARAMETERS: JsonSchema = {
  type: 'object',
  properties: {
    server: { type: 'string', description: 'Only this MCP server; default every server with resources.' },
    cursor: { type: 'string', description: 'The `nextCursor` of a previous answer (needs `server`).' },
  },
  additionalProperties: false,
};

/** What sets one resource tool apart from the other. */
interface ResourceToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
  /** The properties of its structured result. */
  result: Record<string, JsonSchema>;
  searchText: string;
  request: (scope: ResourceScope, args: JsonObject, signal: AbortSignal) => Promise<McpCallToolResult>;
}

function resourceTool(scope: ResourceScope, tool: ResourceToolSpec): ToolExecutor {
  return {
    name: toolName(tool.name),
    spec: {
      type: 'function',
      name: tool.name,
      description: tool.description,
      strict: false,
      parameters: tool.parameters,
      outputSchema: mcpCallToolResultOutputSchema({ type: 'object', properties: tool.result }),
    },
    exposure: 'direct',
    supportsParallelToolCalls: true,
    searchText: tool.searchText,
    handle: (invocation) => runResourceRequest(invocation, scope, (args) => tool.request(scope, args, invocation.signal)),
  };
}

const readResourceTool = (scope: ResourceScope): ToolExecutor =>
  resourceTool(scope, {
    name: READ_MCP_RESOURCE,
    description: 'Reads a resource of an MCP server by URI, for example one a tool result linked to.',
    parameters: READ_PARAMETERS,
    result: { server: { type: 'string' }, uri: { type: 'string' }, contents: { type: 'array' } },
    searchText: 'mcp resource read uri link',
    request: readResource,
  });

const listResourcesTool = (scope: ResourceScope): ToolExecutor =>
  resourceTool(scope, {
    name: LIST_MCP_RESOURCES,
    description: 'Lists the resources MCP servers offer (URI, name, type); read one with `read_mcp_resource`.',
    parameters: LIST_PARAMETERS,
    result: { resources: { type: 'array' }, nextCursor: { type: 'string' } },
    searchText: 'mcp resources list',
    request: listResources,
  });

/**
 * Runs one resource request: a {@link RespondToModelError} (bad arguments) and an abort propagate,
 * any other failure becomes an error result.
 */
async function runResourceRequest(
  invocation: ToolInvocation,
  scope: ResourceScope,
  body: (args: JsonObject) => Promise<McpCallToolResult>,
): Promise<McpToolOutput> {
  const started = performance.now();
  const args = invocation.payload.kind === 'function' ? invocationArguments(invocation, invocation.toolName.name) : {};
  let result: McpCallToolResult;
  try {
    result = await body(args);
  } catch (error) {
    if (error instanceof RespondToModelError) throw error;
    if (invocation.signal.aborted) throw error;
    result = errorCallToolResult(`resource request error: ${error instanceof Error ? error.message : String(error)}`);
  }
  return new McpToolOutput(result, { wallTimeMs: performance.now() - started, maxOutputTokens: scope.maxOutputTokens });
}

/** The ready server named `name` that offers resources; the model is told the names otherwise. */
function serverNamed(scope: ResourceScope, name: unknown): McpServerConnection {
  const offering = scope.servers().filter((server) => server.offersResources);
  const found = offering.find((server) => server.name === name);
  if (found) return found;
  const names = offering.map((server) => `\`${server.name}\``).join(', ');
  throw new RespondToModelError(`unknown MCP server ${JSON.stringify(name)}; servers with resources: ${names || 'none'}`);
}

async function readResource(scope: ResourceScope, args: JsonObject, signal: AbortSignal): Promise<McpCallToolResult> {
  const server = serverNamed(scope, args.server);
  if (typeof args.uri !== 'string' || args.uri === '') throw new RespondToModelError('read_mcp_resource needs a string `uri`');
  const answer = await server.readResource(args.uri, signal);
  const contents = Array.isArray(answer.contents) ? answer.contents : [];
  return resultOf({ server: server.name, uri: args.uri, contents }, contentsToBlocks(contents));
}

async function listResources(scope: ResourceScope, args: JsonObject, signal: AbortSignal): Promise<McpCallToolResult> {
  if (args.cursor !== undefined && args.server === undefined) throw new RespondToModelError('list_mcp_resources: `cursor` needs `server`');
  const targets = args.server === undefined ? scope.servers().filter((server) => server.offersResources) : [serverNamed(scope, args.server)];
  const resources: JsonValue[] = [];
  let nextCursor: string | undefined;
  for (const server of targets) {
    const cursor = await listServerResources(server, { cursor: typeof args.cursor === 'string' ? args.cursor : undefined, onePage: args.server !== undefined, signal }, resources);
    if (args.server !== undefined) nextCursor = cursor;
  }
  const structured: JsonObject = nextCursor === undefined ? { resources } : { resources, nextCursor };
  return resultOf(structured, [{ type: 'text', text: JSON.stringify(structured) }]);
}

/**
 * Appends one server's resources to `into`, each tagged with the server name, and returns the cursor
 * of the page after the last one read. One server asked for by name: one page (the caller pages on);
 * every server: every page, bounded.
 */
async function listServerResources(
  server: McpServerConnection,
  options: { cursor: string | undefined; onePage: boolean; signal: AbortSignal },
  into: JsonValue[],
): Promise<string | undefined> {
  let cursor = options.cursor;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    // A signal of its own per page: the SDK never removes the abort listener it adds to a request's
    // signal, and 20 pages on the call's signal would trip Node's listener-leak warning.
    const answer = await server.listResources(cursor, AbortSignal.any([options.signal]));
    for (const resource of Array.isArray(answer.resources) ? answer.resources : []) {
      if (isJsonObject(resource)) into.push({ server: server.name, ...resource });
    }
    cursor = typeof answer.nextCursor === 'string' ? answer.nextCursor : undefined;
    if (cursor === undefined || options.onePage) break;
  }
  return cursor;
}
