import type { ToolSpec } from '@switchyard/protocol';

/** Specs both client tests plan with: freeform tools (with and without a grammar) and a namespace. */
export const execSpec: ToolSpec = { type: 'custom', name: 'exec', description: 'Run JavaScript in a Code Mode cell.' };

export const applyPatchSpec: ToolSpec = {
  type: 'custom',
  name: 'apply_patch',
  description: 'Edit files with a patch.',
  grammar: { syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch' },
};

export const clockSpec: ToolSpec = {
  type: 'namespace',
  name: 'clock',
  description: 'Time tools.',
  tools: [{ type: 'function', name: 'curr_time', description: 'Current time.', parameters: { type: 'object', properties: {} } }],
};

export const toolSearchSpec: ToolSpec = {
  type: 'tool_search',
  execution: 'client',
  description: '# Tool discovery',
  parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'number' } }, required: ['query'], additionalProperties: false },
};
