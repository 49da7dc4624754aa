import type { HookRunner, PreToolUseRequest, ResponseItem, ToolExecutor } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { sleep } from '@switchyard/test-helpers';

export { sleep };
export { callItem as call, cellIdOf, execItem as exec } from '@switchyard/test-helpers';

export const wait = (callId: string, args: Record<string, unknown>): ResponseItem => ({ type: 'function_call', call_id: callId, name: 'wait', arguments: JSON.stringify(args) });
export const say = (text: string): ResponseItem => ({ type: 'message', role: 'assistant', content: text });

/** The texts of an output item (string body or content items). */
export function texts(item: ResponseItem | undefined): string[] {
  const output = (item as { output?: unknown } | undefined)?.output;
  if (typeof output === 'string') return [output];
  if (Array.isArray(output)) return output.map((part: { text?: string; image_url?: string }) => part.text ?? part.image_url ?? '');
  return [];
}

/** A tool that sleeps `ms` (abortable) and records start/end times. */
export function sleepTool(log: Array<{ name: string; start: number; end?: number; aborted?: boolean }>, name = 'nap'): ToolExecutor {
  return defineFunctionTool({
    name,
    description: 'Sleeps for ms milliseconds and answers with the label.',
    parameters: { type: 'object', properties: { ms: { type: 'number' }, label: { type: 'string' } }, required: ['ms'] },
    outputSchema: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
    supportsParallelToolCalls: true,
    async handle({ args, signal }) {
      const entry: { name: string; start: number; end?: number; aborted?: boolean } = { name: String(args.label ?? name), start: Date.now() };
      log.push(entry);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, args.ms as number);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          entry.aborted = true;
          reject(new Error('aborted'));
        });
      });
      entry.end = Date.now();
      return { label: String(args.label ?? name) };
    },
  });
}

/** A HookRunner recording every PreToolUse request and blocking tools named in `block`. */
export function recordingHooks(block: string[] = []): HookRunner & { pre: PreToolUseRequest[] } {
  const pre: PreToolUseRequest[] = [];
  return {
    pre,
    async runPreToolUse(request) {
      pre.push(request);
      if (block.includes(request.toolName)) return { blocked: true, reason: 'policy says no', additionalContexts: [] };
      return { blocked: false, additionalContexts: [] };
    },
    async runPostToolUse() {
      return { additionalContexts: [] };
    },
  };
}
