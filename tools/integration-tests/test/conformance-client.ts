// The client side of the MCP conformance suite's client scenarios: @switchyard/mcp's mcpTools
// against the scenario's server, with OAuth through `auth` (an in-memory token store; `authorize`
// follows the suite's authorization endpoint, which redirects at once with a code) and
// `onElicitation` accepting with empty content (the SDK applies the schema's defaults). It lists
// the tools and calls each through the registry's dispatch with arguments made from its schema.
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { displayName, type JsonObject, type JsonSchema, type ToolExecutor } from '@switchyard/protocol';
import { invokeTool } from '@switchyard/registry/testing';
import { mcpTools, type McpAuthOptions, type McpOAuthState, type McpServerConfig } from '@switchyard/mcp';

const REDIRECT = 'http://localhost:3000/callback';

/** The scenario as the suite describes it to its client. */
export interface ScenarioRun {
  readonly url: string;
  readonly scenario: string;
  /** MCP_CONFORMANCE_CONTEXT: JSON with scenario data (pre-registered client id, keys). */
  readonly context: string;
  /** MCP_CONFORMANCE_PROTOCOL_VERSION: the revision the run asks for (absent: the client's default). */
  readonly protocolVersion?: string;
}

/** The `protocol` of the server entry for the revision a run asks for. */
function protocolFor(version: string | undefined): McpServerConfig['protocol'] {
  if (version === undefined) return undefined;
  return version >= '2026' ? '2026-07-28' : 'legacy';
}

/** Arguments the schema accepts: a number, string or boolean per property. */
function sampleArguments(schema: JsonSchema): JsonObject {
  const args: JsonObject = {};
  let n = 1;
  for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, { type?: string }>)) {
    if (property.type === 'number' || property.type === 'integer') args[key] = n++;
    else if (property.type === 'string') args[key] = 'conformance';
    else if (property.type === 'boolean') args[key] = true;
  }
  return args;
}

/** The `auth` option for a scenario: pre-registered credentials and client-credentials providers from its context. */
function authFor(scenario: string, context: Record<string, string>): McpAuthOptions {
  const states = new Map<string, McpOAuthState>();
  if (scenario === 'auth/pre-registration') {
    states.set('conformance', { clientInformation: { client_id: context.client_id, client_secret: context.client_secret, redirect_uris: [REDIRECT] } });
  }
  return {
    store: { load: (server) => states.get(server), save: (server, state) => void states.set(server, state) },
    redirectUrl: REDIRECT,
    clientName: 'switchyard-conformance',
    ...(scenario === 'auth/basic-cimd' ? { clientMetadataUrl: 'https://conformance-test.local/client-metadata.json' } : {}),
    // The suite's authorization endpoint redirects at once: the redirect (its code, and its iss
    // where the server sends one) is what a browser would bring back.
    async authorize({ url }) {
      const response = await fetch(url, { redirect: 'manual' });
      const location = response.headers.get('location');
      if (!location || !new URL(location).searchParams.get('code')) throw new Error(`the authorization endpoint answered ${response.status} without a code`);
      return new URL(location);
    },
    provider: () => {
      if (scenario === 'auth/client-credentials-basic') return new ClientCredentialsProvider({ clientId: context.client_id, clientSecret: context.client_secret });
      if (scenario === 'auth/client-credentials-jwt') {
        return new PrivateKeyJwtProvider({ clientId: context.client_id, privateKey: context.private_key_pem, algorithm: context.signing_algorithm || 'ES256' });
      }
      return undefined;
    },
  };
}

/**
 * The calls to make: the scenario's own (`toolCalls` in its context, each argument the scenario
 * gives no value — `null` — left out, as a model leaves out a parameter it has nothing for), the
 * preservation scenario's echo of the schema it listed, or every listed tool with sample arguments.
 */
function plannedCalls(scenario: string, context: Record<string, unknown>, executors: readonly ToolExecutor[]): Array<{ executor: ToolExecutor; args: JsonObject }> {
  const named = (name: string) => executors.find((executor) => displayName(executor.name) === `mcp__conformance__${name}`);
  const toolCalls = context.toolCalls as Array<{ name: string; arguments: Record<string, unknown> }> | undefined;
  if (Array.isArray(toolCalls)) {
    return toolCalls.flatMap(({ name, arguments: args }) => {
      const executor = named(name);
      const given = Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null)) as JsonObject;
      return executor ? [{ executor, args: given }] : [];
    });
  }
  if (scenario === 'json-schema-2020-12-preservation') {
    const focal = named('json_schema_2020_12_tool');
    const echo = named('json_schema_echo');
    return focal && echo && focal.spec.type === 'function' ? [{ executor: echo, args: { schema: focal.spec.parameters as JsonObject } }] : [];
  }
  return executors.filter((executor) => executor.spec.type === 'function').map((executor) => ({ executor, args: sampleArguments((executor.spec as { parameters: JsonSchema }).parameters) }));
}

/** Runs the client for one scenario: exit code 0 when the server started and every call answered. */
export async function runScenarioClient(run: ScenarioRun): Promise<{ code: number; log: string }> {
  const log: string[] = [];
  const context = JSON.parse(run.context) as Record<string, unknown>;
  const mcp = await mcpTools({
    servers: { conformance: { url: run.url, startupTimeoutMs: 120_000, toolTimeoutMs: 120_000, ...(protocolFor(run.protocolVersion) ? { protocol: protocolFor(run.protocolVersion) } : {}) } },
    auth: authFor(run.scenario, context as Record<string, string>),
    onElicitation: async () => ({ action: 'accept', content: {} }),
    onWarning: (warning) => log.push(`warning: ${warning.message}`),
  });
  let failed = mcp.servers()[0].state !== 'ready';
  try {
    for (const { executor, args } of plannedCalls(run.scenario, context, mcp.executors())) {
      const result = await invokeTool(executor, { kind: 'function', arguments: JSON.stringify(args) }, { callId: 'conformance', hooks: false });
      log.push(`${displayName(executor.name)} ${JSON.stringify(args)} → ${JSON.stringify((result.item as { output?: unknown }).output).slice(0, 300)}`);
      if (result.error || result.output?.success === false) failed = true;
    }
  } finally {
    await mcp.close();
  }
  return { code: failed ? 1 : 0, log: `${log.join('\n')}\n` };
}
