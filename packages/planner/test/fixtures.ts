import type { CodeModeContributor, CodeModeSurface, JsonSchema, StepContext, ToolExecutor, ToolExposure } from '@switchyard/protocol';
import { defineFreeformTool, defineFunctionTool } from '@switchyard/kit';

/** Options of {@link fn}: a test-invented function tool. */
export interface FnOptions {
  namespace?: string;
  namespaceDescription?: string;
  description?: string;
  exposure?: ToolExposure;
  parameters?: JsonSchema;
  outputSchema?: JsonSchema;
  searchText?: string;
}

/** A function tool that answers with its own name. */
export function fn(name: string, options: FnOptions = {}): ToolExecutor {
  return defineFunctionTool({
    name,
    namespace: options.namespace,
    namespaceDescription: options.namespaceDescription,
    description: options.description ?? `The ${name} tool.`,
    parameters: options.parameters ?? { type: 'object', properties: {} },
    outputSchema: options.outputSchema,
    exposure: options.exposure,
    searchText: options.searchText,
    handle: () => name,
  });
}

/** A freeform tool that echoes its input. */
export function freeform(name: string, options: { namespace?: string; exposure?: ToolExposure } = {}): ToolExecutor {
  return defineFreeformTool({
    name,
    namespace: options.namespace,
    description: `The ${name} freeform tool.`,
    exposure: options.exposure,
    handle: ({ input }) => input,
  });
}

/** A contributor (Code Mode's role) that records what it was given and returns exec + wait. */
export function recordingContributor(): CodeModeContributor & { calls: Array<{ surface: CodeModeSurface; step: StepContext }> } {
  const calls: Array<{ surface: CodeModeSurface; step: StepContext }> = [];
  return {
    calls,
    executors(surface, step) {
      calls.push({ surface, step });
      return [
        defineFreeformTool({ name: 'exec', description: `Run JavaScript (${surface.tools.length} nested tools).`, handle: () => 'ran' }),
        defineFunctionTool({
          name: 'wait',
          description: 'Waits on a yielded exec cell.',
          parameters: { type: 'object', properties: { cell_id: { type: 'string' } }, required: ['cell_id'], additionalProperties: false },
          handle: () => 'waited',
        }),
      ];
    },
  };
}

/** The names of the request's tools, in order (namespaces by their name). */
export function visibleNames(tools: readonly { type: string; name?: unknown }[]): string[] {
  return tools.map((tool) => (typeof tool.name === 'string' ? tool.name : tool.type));
}
