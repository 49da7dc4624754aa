import type { HookRunner, PreToolUseRequest, ResponseItem, ToolExecutor } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { afterEach } from 'vitest';
import { createSession, type Session } from '@switchyard/session';
import { sleep, texts } from '@switchyard/test-helpers';
export { say, texts } from '@switchyard/test-helpers';

export { sleep };
export { callItem as call, cellIdOf, execItem as exec } from '@switchyard/test-helpers';

export const wait = (callId: string, args: Record<string, unknown>): ResponseItem => ({ type: 'function_call', call_id: callId, name: 'wait', arguments: JSON.stringify(args) });


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

/** A HookRunner that records every PreToolUse request and blocks the tools named in `block`. */
export function blockingHooks(block: string[] = []): HookRunner & { pre: PreToolUseRequest[] } {
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

/** Call at the top of a test file: `createSession` over `defaults`, each session it made shut down after the test. */
export function useSessions(defaults: Partial<Parameters<typeof createSession>[0]> = {}): (options: Parameters<typeof createSession>[0]) => Session {
  const open: Session[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((session) => session.shutdown()));
  });
  return (options) => {
    const created = createSession({ ...defaults, ...options });
    open.push(created);
    return created;
  };
}
