import { defineFunctionTool } from '@switchyard/kit';
import type { ResponseItem } from '@switchyard/protocol';

/** An assistant message item. */
export const say = (content: string): ResponseItem => ({ type: 'message', role: 'assistant', content });

/** A tool that answers `slow done` after `ms` (so a reader can leave while it runs). */
export const slowTool = (ms: number) =>
  defineFunctionTool({
    name: 'slow',
    description: 'Takes a while.',
    parameters: { type: 'object', properties: {} },
    handle: async () => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return 'slow done';
    },
  });
