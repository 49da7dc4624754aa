import {
  displayName,
  type DiscoveredTool,
  type JsonSchema,
  type NestedToolDefinition,
  type ToolExecutor,
  type ToolInvocation,
  type ToolOutput,
} from '@switchyard/protocol';
import { JsonToolOutput } from '@switchyard/kit';
import { codeModeDeclaration, invocationArguments } from '@switchyard/kit/internal';
import type { ToolSearchSettings } from './search-ranking';
import { searchArguments, sharedToolSearchIndex, type ToolSearchIndex } from './tool-search';

/** What a cell's `tools.tool_search` searches: every tool callable from the cell, with its nested definition. */
export interface NestedSearchSurface {
  /** Callable executors in host order (the search's tie order) and the definition a cell calls each by. */
  readonly tools: ReadonlyMap<ToolExecutor, NestedToolDefinition>;
}

/** The nested definition of `tools.tool_search` itself, as `ALL_TOOLS` and the `exec` description show it. */
export const NESTED_TOOL_SEARCH_INPUT: JsonSchema = {
  type: 'object',
  properties: {
    query: { type: 'string', description: 'Words to look for: what the tool does, or its exact name.' },
    limit: { type: 'number', description: 'Maximum number of tools to return.' },
  },
  required: ['query'],
  additionalProperties: false,
};

export const NESTED_TOOL_SEARCH_OUTPUT: JsonSchema = {
  type: 'object',
  properties: {
    tools: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'The tool on `tools`.' },
          description: { type: 'string' },
          declaration: { type: 'string', description: 'Its TypeScript declaration.' },
        },
        required: ['name', 'description', 'declaration'],
      },
    },
  },
  required: ['tools'],
};

export const NESTED_TOOL_SEARCH_DESCRIPTION =
  'Searches the nested tools, deferred ones included, by name and description; a tool whose exact name is in the query comes first. ' +
  'Returns the best matches with their TypeScript declarations; each is callable on `tools` at once, in this cell.';

/** Declarations by definition object (the planner hands out the same definitions while a tool is unchanged). */
const declarations = new WeakMap<NestedToolDefinition, string>();

function found(definition: NestedToolDefinition): DiscoveredTool {
  let declaration = declarations.get(definition);
  if (declaration === undefined) {
    declaration = codeModeDeclaration(definition);
    declarations.set(definition, declaration);
  }
  return { toolName: displayName(definition.toolName), name: definition.codeModeName, description: definition.description, declaration };
}

/** Tells the step's discovery sink what a cell found; a sink that throws costs nothing. */
function report(invocation: ToolInvocation, query: string, tools: readonly DiscoveredTool[]): void {
  const sink = invocation.step.toolDiscovery;
  if (!sink || tools.length === 0) return;
  const cellId = invocation.source.kind === 'code-mode' ? invocation.source.cellId : undefined;
  try {
    sink.found({ callId: invocation.callId, ...(cellId === undefined ? {} : { cellId }), query, tools });
  } catch {
    // the host's record is its own business: the cell still gets its answer
  }
}

/**
 * A cell's search: `{ query, limit? }` (the same checks and refusals as the model's `tool_search`)
 * → `{ tools: [{ name, description, declaration }] }`, the matching tools callable from the cell,
 * best first (exact names first). Every tool found is already on the cell's `tools` (deferred tools
 * are callable from the start), so the cell may call it at once. The step's `toolDiscovery` sink
 * hears of what was found.
 */
export function nestedSearch(surface: NestedSearchSurface, limits: { defaultLimit: number; maxLimit: number | undefined; settings: ToolSearchSettings }) {
  const executors = [...surface.tools.keys()];
  let index: ToolSearchIndex | undefined;
  return {
    async handle(invocation: ToolInvocation): Promise<ToolOutput> {
      const { query, limit } = searchArguments(invocationArguments(invocation, 'tool_search'), limits.defaultLimit, limits.maxLimit);
      index ??= sharedToolSearchIndex(executors);
      const positions = await index.rank(query, limit, limits.settings, invocation.signal);
      const tools: DiscoveredTool[] = [];
      for (const position of positions) {
        const definition = surface.tools.get(index.executors[position]);
        if (definition) tools.push(found(definition));
      }
      report(invocation, query, tools);
      return new JsonToolOutput({ tools: tools.map(({ name, description, declaration }) => ({ name, description, declaration })) });
    },
  };
}
