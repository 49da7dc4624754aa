/**
 * The full Switchyard stack for benches: a session in `code-mode-only` mode (runtime + broker +
 * router + registry, no hooks) with two tools, `noop` and `nap` (sleeps `ms`).
 */
import type { ResponseItem, ToolExecutor } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession, type Session, type Step, type Turn } from '@switchyard/session';

export const noopTool: ToolExecutor = defineFunctionTool({
  name: 'noop',
  description: 'Does nothing.',
  parameters: { type: 'object', properties: {} },
  supportsParallelToolCalls: true,
  handle: async () => null,
});

export const napTool: ToolExecutor = defineFunctionTool({
  name: 'nap',
  description: 'Sleeps ms milliseconds.',
  parameters: { type: 'object', properties: { ms: { type: 'number' } }, required: ['ms'] },
  supportsParallelToolCalls: true,
  handle: ({ args }) => new Promise((resolve) => setTimeout(() => resolve(null), args.ms as number)),
});

export interface BenchStack {
  session: Session;
  turn: Turn;
  step: Step;
  /** Runs `code` as one `exec` call and returns the output texts after the status line; throws unless it completed. */
  exec(code: string): Promise<string[]>;
  close(): Promise<void>;
}

let calls = 0;

/** Opens a session, a turn and a step; `runtimeOptions` go to `createCodeModeRuntime`. */
export async function openBenchStack(runtimeOptions: Record<string, unknown> = {}): Promise<BenchStack> {
  const session = createSession({
    toolMode: 'code-mode-only',
    tools: [noopTool, napTool],
    codeMode: { runtimeOptions: { maxInFlightCalls: 1024, ...runtimeOptions } },
  });
  const turn = session.beginTurn();
  const step = await turn.step();
  return {
    session,
    turn,
    step,
    async exec(code) {
      const item: ResponseItem = { type: 'custom_tool_call', call_id: `bench-${++calls}`, name: 'exec', input: code };
      const out = (await step.dispatch(item)) as { output: string | Array<{ text?: string }> };
      const texts = typeof out.output === 'string' ? [out.output] : out.output.map((part) => part.text ?? '');
      if (!texts[0]?.startsWith('Script completed')) throw new Error(`bench cell did not complete: ${JSON.stringify(out)}`);
      return texts.slice(1);
    },
    async close() {
      await turn.end();
      await session.shutdown();
    },
  };
}
