import { defineFunctionTool } from '@switchyard/kit';
import type { ResponseItem } from '@switchyard/protocol';
export { say } from '@switchyard/test-helpers';


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
