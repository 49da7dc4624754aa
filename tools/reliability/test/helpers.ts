import { spawn } from 'node:child_process';
import type { HookRunner, ResponseItem, ToolExecutor, ToolOutputItem } from '@switchyard/protocol';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession, type Session, type SessionOptions, type Step, type Turn } from '@switchyard/session';
import { execItem, outputText, sleep, texts } from '@switchyard/test-helpers';
export { say, texts } from '@switchyard/test-helpers';

export { sleep };
export { callItem, execItem, outputOf, outputsOf, outputText } from '@switchyard/test-helpers';

export const waitItem = (callId: string, args: Record<string, unknown>): ResponseItem => ({
  type: 'function_call',
  call_id: callId,
  name: 'wait',
  arguments: JSON.stringify(args),
});

export interface ExecOutcome {
  /** `completed`, `failed`, `running` or `terminated`, from the status line. */
  status: 'completed' | 'failed' | 'running' | 'terminated';
  cellId?: string;
  /** Output texts after the status line, without the trailing script error. */
  output: string[];
  /** The text after `Script error:\n`, when the script failed. */
  error?: string;
  item: ToolOutputItem;
}

/** Reads an exec / wait output item. */
export function outcome(item: ToolOutputItem): ExecOutcome {
  const all = texts(item);
  const head = all[0] ?? '';
  const status = head.startsWith('Script completed')
    ? 'completed'
    : head.startsWith('Script failed')
      ? 'failed'
      : head.startsWith('Script terminated')
        ? 'terminated'
        : head.startsWith('Script running')
          ? 'running'
          : undefined;
  if (!status) throw new Error(`not an exec output: ${JSON.stringify(item).slice(0, 500)}`);
  const rest = all.slice(1);
  const last = rest.at(-1);
  const error = last?.startsWith('Script error:\n') ? last.slice('Script error:\n'.length) : undefined;
  return { status, cellId: /cell ID (\S+)/.exec(head)?.[1], output: error === undefined ? rest : rest.slice(0, -1), error, item };
}

/** Test tools: `echo` returns its input, `fail` throws, `hang` waits for its signal, `measure` returns the length of `s`. */
export function testTools(log: { aborted: string[]; measured: number[]; started?: string[] } = { aborted: [], measured: [] }): ToolExecutor[] {
  return [
    defineFunctionTool({
      name: 'echo',
      description: 'Returns its input.',
      parameters: { type: 'object' },
      supportsParallelToolCalls: true,
      handle: async ({ args }) => args,
    }),
    defineFunctionTool({
      name: 'fail',
      description: 'Always throws.',
      parameters: { type: 'object' },
      supportsParallelToolCalls: true,
      handle: () => {
        throw new Error('the tool failed on purpose');
      },
    }),
    defineFunctionTool({
      name: 'hang',
      description: 'Never answers until cancelled.',
      parameters: { type: 'object', properties: { id: { type: 'string' } } },
      supportsParallelToolCalls: true,
      handle: ({ args, signal }) =>
        new Promise((_, reject) => {
          log.started?.push(String(args.id ?? ''));
          signal.addEventListener('abort', () => {
            log.aborted.push(String(args.id ?? ''));
            reject(new Error('aborted'));
          });
        }),
    }),
    defineFunctionTool({
      name: 'measure',
      description: 'Returns the length of s.',
      parameters: { type: 'object', properties: { s: { type: 'string' } }, required: ['s'] },
      supportsParallelToolCalls: true,
      handle: async ({ args }) => {
        log.measured.push((args.s as string).length);
        return { length: (args.s as string).length };
      },
    }),
  ];
}

export interface Harness {
  session: Session;
  turn: Turn;
  step: Step;
  exec(code: string, options?: { yieldTimeMs?: number; callId?: string }): Promise<ExecOutcome>;
  close(): Promise<void>;
}

let sequence = 0;

/** A code-mode-only session with one open turn and step. */
export async function openHarness(options: Partial<SessionOptions> & { runtimeOptions?: Record<string, unknown>; hooks?: HookRunner } = {}): Promise<Harness> {
  const { runtimeOptions, ...rest } = options;
  const session = createSession({
    toolMode: 'code-mode-only',
    tools: testTools(),
    codeMode: { runtimeOptions: { nodeSnapshotCheck: 'ignore', ...runtimeOptions } },
    ...rest,
  });
  const turn = session.beginTurn();
  const step = await turn.step();
  return {
    session,
    turn,
    step,
    async exec(code, execOptions = {}) {
      const pragma = `// @exec: {"yield_time_ms": ${execOptions.yieldTimeMs ?? 30_000}}\n`;
      return outcome(await step.dispatch(execItem(execOptions.callId ?? `exec-${++sequence}`, pragma + code)));
    },
    async close() {
      await turn.end();
      await session.shutdown();
    },
  };
}

/** Node's arguments that run the TypeScript `file` from source (through tsx) with `args`, after `nodeArgs`. */
export const sourceArgv = (file: string, args: readonly string[] = [], nodeArgs: readonly string[] = []): string[] => [
  ...nodeArgs,
  '--conditions=@switchyard/source',
  '--import',
  'tsx',
  file,
  ...args,
];

/**
 * Runs a TypeScript fixture in a child Node process (sources through tsx) with a time bound: SIGKILL
 * after `timeoutMs`, so a bomb is a red test, not a dead runner. Resolves with how it ended, its last
 * line of stdout and the end of its stderr.
 */
export function runFixture(
  file: string,
  args: readonly string[],
  options: { cwd: string; timeoutMs: number; nodeArgs?: readonly string[] },
): Promise<{ code: number | null; signal: NodeJS.Signals | null; lastLine?: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, sourceArgv(file, args, options.nodeArgs), { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data) => (stdout += data));
    child.stderr.on('data', (data) => (stderr = (stderr + data).slice(-4000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, lastLine: stdout.trim().split('\n').at(-1) || undefined, stderr });
    });
  });
}

export { workerChildren, residentMb as workerRssMb } from '@switchyard/config/proc';

/** The process session id in an `exec_command` answer of a command still running (NaN when there is none). */
export const execSessionIdOf = (item: unknown): number => Number(/Process running with session ID (\d+)/.exec(outputText(item))?.[1]);

/** The error of a cell that completed with one (undefined for any other observation). */
export const errorOf = (observation: { kind: string; error?: string }): string | undefined => (observation.kind === 'completed' ? observation.error : undefined);
