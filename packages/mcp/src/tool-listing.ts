import { ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, isJsonObject, type JsonSchema } from '@switchyard/protocol';
import type { StructuredContentCheck } from './call-result';
import type { ResolvedServerConfig } from './config';
import { ToolSchemaValidators } from './schema-dialect';
import { createToolNamer } from './tool-names';

/** A tool of a server's `tools/list` that can be offered: its names, description, schemas and annotations. */
export interface ListedTool {
  rawName: string;
  /** The sanitized function name (`dotted.name-tool` → `dotted_name_tool`). */
  functionName: string;
  description: string;
  parameters: JsonSchema;
  outputSchema?: JsonSchema;
  checkOutput?: StructuredContentCheck;
  /** Annotated `idempotentHint: true`: a repeat of a call has no further effect. */
  idempotent: boolean;
}

type RawTool = {
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  description?: string;
  title?: string;
  execution?: { taskSupport?: string };
  annotations?: { idempotentHint?: unknown };
};

/**
 * The usable tools of a `tools/list` answer, in order: enabled and not disabled by the server's
 * config, valid against the MCP schema, listed once, not requiring task-based execution, with
 * schemas that compile. Each tool left out is reported through `skip` with the reason.
 */
export function listedTools(rawTools: readonly unknown[], config: ResolvedServerConfig['config'], skip: (tool: string, reason: string) => void): ListedTool[] {
  const enabled = config.enabledTools ? new Set(config.enabledTools) : undefined;
  const disabled = new Set(config.disabledTools ?? []);
  const nameFor = createToolNamer();
  const seenRaw = new Set<string>();
  // Fresh validators per listing: ajv caches every compiled schema, and lists can change often.
  const validators = new ToolSchemaValidators();
  const tools: ListedTool[] = [];
  for (const raw of rawTools) {
    const rawName = isJsonObject(raw) && typeof raw.name === 'string' ? raw.name : '<unnamed>';
    if ((enabled && !enabled.has(rawName)) || disabled.has(rawName)) continue;
    const parsed = ToolSchema.safeParse(raw);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.map(String).join('.') || '(tool)'}: ${issue.message}`);
      skip(rawName, `invalid tool definition (${problems.join('; ')})`);
      continue;
    }
    if (seenRaw.has(rawName)) {
      skip(rawName, 'listed twice');
      continue;
    }
    seenRaw.add(rawName);
    const source = raw as RawTool;
    if (source.execution?.taskSupport === 'required') {
      // A tools/call without a task is refused by such a tool, and this client runs no tasks.
      skip(rawName, 'it requires task-based execution (`execution.taskSupport: "required"`), which this client does not support');
      continue;
    }
    const schemas = compileSchemas(rawName, source, validators, skip);
    if (!schemas) continue;
    tools.push({ rawName, functionName: nameFor(rawName), description: source.description || source.title || '', ...schemas, idempotent: source.annotations?.idempotentHint === true });
  }
  return tools;
}

/** A tool's input and output schemas with their checks; `undefined` (and a warning) when one cannot be used. */
function compileSchemas(
  rawName: string,
  source: RawTool,
  validators: ToolSchemaValidators,
  skip: (tool: string, reason: string) => void,
): { parameters: JsonSchema; outputSchema?: JsonSchema; checkOutput?: StructuredContentCheck } | undefined {
  let parameters: JsonSchema;
  try {
    parameters = validators.compile(source.inputSchema).schema;
  } catch (error) {
    skip(rawName, `input schema cannot be used: ${errorMessage(error)}`);
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
    skip(rawName, `output schema cannot be used: ${errorMessage(error)}`);
    return undefined;
  }
}
