import { ToolSchema } from '@modelcontextprotocol/core';
import type { Tool } from '@modelcontextprotocol/client';
import { toolDeclarationFromMcpTool, type ToolDeclaration } from '@modelcontextprotocol/ext-tasks/client';
import { isJsonObject, toolName, type JsonSchema, type ToolExecutor, type ToolInvocation, type ToolOutput } from '@switchyard/protocol';
import { mcpCallToolResultOutputSchema, type StructuredContentCheck } from './call-result';
import type { ResolvedServerConfig } from './config';
import { ToolSchemaValidators } from './schema-dialect';
import { createToolNamer } from './tool-names';
import { xMcpHeaderProblem } from './x-mcp-header';

/** One usable tool of a server's list: how it is called, and its executor. */
export interface ListedTool {
  readonly executor: ToolExecutor;
  /** The tool as the server listed it, without its output schema (for `Mcp-Param-*` headers). */
  readonly definition: Tool;
  /** Its task declaration (`execution.taskSupport`). */
  readonly declaration: ToolDeclaration;
}

/** What building a server's executors needs from its connection. */
export interface ExecutorHost {
  readonly name: string;
  readonly namespace: string;
  readonly resolved: ResolvedServerConfig;
  /** The server's `instructions` (the namespace description when the configuration names none). */
  readonly instructions: string | undefined;
  /** Whether the list came over streamable HTTP on 2026-07-28 (where `x-mcp-header` must be valid). */
  readonly checksHeaders: boolean;
  /** Whether the server runs MCP Tasks (a tool that requires one is callable). */
  readonly runsTasks: boolean;
  /** Reports an unusable tool once. */
  skip(tool: string, reason: string): void;
  /** Runs one call of the tool by raw name, its result checked with `checkOutput`. */
  handleCall(rawName: string, invocation: ToolInvocation, checkOutput: StructuredContentCheck | undefined): Promise<ToolOutput>;
}

/** The members of a listed tool read here (the SDK's `ToolSchema` accepted it). */
type RawTool = {
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  description?: string;
  title?: string;
  annotations?: { idempotentHint?: unknown };
};

/** A tool's input and output schemas with their checks; `undefined` (and a warning) when one cannot be used. */
function compileSchemas(
  host: ExecutorHost,
  rawName: string,
  source: RawTool,
  validators: ToolSchemaValidators,
): { parameters: JsonSchema; outputSchema?: JsonSchema; checkOutput?: StructuredContentCheck } | undefined {
  let parameters: JsonSchema;
  try {
    parameters = validators.compile(source.inputSchema).schema;
  } catch (error) {
    host.skip(rawName, `input schema cannot be used: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  if (parameters.properties === undefined || parameters.properties === null) parameters.properties = {};
  if (!source.outputSchema) return { parameters };
  try {
    // The output schema is nested in the CallToolResult schema, where `$schema` has no place;
    // its check is compiled in its own dialect all the same.
    const { schema, check } = validators.compile(source.outputSchema);
    const { $schema: _dialect, ...outputSchema } = schema;
    return { parameters, outputSchema: outputSchema as JsonSchema, checkOutput: check };
  } catch (error) {
    host.skip(rawName, `output schema cannot be used: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/**
 * The usable tools of a raw `tools/list`, in order: filtered by `enabledTools` / `disabledTools`;
 * a definition the SDK's `ToolSchema` refuses, a name listed twice, an unusable schema or (over
 * HTTP on 2026-07-28) invalid `x-mcp-header` annotations is skipped with one warning.
 */
export function buildListedTools(rawTools: readonly unknown[], host: ExecutorHost): ListedTool[] {
  const config = host.resolved.config;
  const enabled = config.enabledTools ? new Set(config.enabledTools) : undefined;
  const disabled = new Set(config.disabledTools ?? []);
  const nameFor = createToolNamer();
  const seenRaw = new Set<string>();
  // Fresh validators per listing: ajv caches every compiled schema, and lists can change often.
  const schemaValidators = new ToolSchemaValidators();
  const listed: ListedTool[] = [];
  for (const raw of rawTools) {
    const rawName = isJsonObject(raw) && typeof raw.name === 'string' ? raw.name : '<unnamed>';
    if ((enabled && !enabled.has(rawName)) || disabled.has(rawName)) continue;
    const parsed = ToolSchema.safeParse(raw);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.map(String).join('.') || '(tool)'}: ${issue.message}`);
      host.skip(rawName, `invalid tool definition (${problems.join('; ')})`);
      continue;
    }
    if (seenRaw.has(rawName)) {
      host.skip(rawName, 'listed twice');
      continue;
    }
    seenRaw.add(rawName);
    const source = raw as RawTool;
    const headerProblem = host.checksHeaders ? xMcpHeaderProblem(source.inputSchema as never) : undefined;
    if (headerProblem) {
      host.skip(rawName, `invalid \`x-mcp-header\` annotation: ${headerProblem}`);
      continue;
    }
    const declaration = toolDeclarationFromMcpTool(raw as Tool);
    if (declaration.taskSupport === 'required' && !host.runsTasks) {
      // A plain tools/call is refused by such a tool, and this server declares no task support.
      host.skip(rawName, 'it requires task-based execution (`execution.taskSupport: "required"`), and the server does not declare MCP Tasks for tools/call');
      continue;
    }
    const schemas = compileSchemas(host, rawName, source, schemaValidators);
    if (!schemas) continue;
    const { outputSchema: _output, ...definition } = raw as Tool;
    const executor = createExecutor(host, rawName, nameFor(rawName), source.description || source.title || '', schemas);
    // The server says a repeat of a call has no further effect: a resumed Code Mode cell may run it again.
    listed.push({ executor: source.annotations?.idempotentHint === true ? { ...executor, idempotent: true } : executor, definition: definition as Tool, declaration });
  }
  return listed;
}

function createExecutor(
  host: ExecutorHost,
  rawName: string,
  functionName: string,
  description: string,
  schemas: { parameters: JsonSchema; outputSchema?: JsonSchema; checkOutput?: StructuredContentCheck },
): ToolExecutor {
  const config = host.resolved.config;
  const namespaceDescription = config.description ?? host.instructions;
  const propertyNames = Object.keys(schemas.parameters.properties ?? {});
  return {
    name: toolName(functionName, host.namespace),
    spec: {
      type: 'function',
      name: functionName,
      description,
      strict: false,
      parameters: schemas.parameters,
      outputSchema: mcpCallToolResultOutputSchema(schemas.outputSchema ?? {}),
    },
    exposure: config.exposure ?? 'direct',
    supportsParallelToolCalls: config.parallel ?? false,
    ...(namespaceDescription ? { namespaceDescription } : {}),
    searchText: [host.name, rawName, ...propertyNames].join(' '),
    handle: (invocation) => host.handleCall(rawName, invocation, schemas.checkOutput),
  };
}
