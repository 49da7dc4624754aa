import { createInterface } from 'node:readline';
import type { ResponseItem, SandboxMode, ToolMode } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { builtinTools } from './builtins';
import { createStyle } from './render';

export interface RunCommandOptions {
  source: string;
  mode: ToolMode;
  cwd: string;
  json: boolean;
  color: boolean;
  yieldTimeMs?: number;
  /** The cell's limits (`cpuTimeMs`, `wallTimeMs`; absent: the runtime's defaults). */
  limits?: { cpuTimeMs?: number | false; wallTimeMs?: number | false };
  /** Ask "wait / terminate" on every yield (reads answers from `answers`). */
  interactive: boolean;
  answers?: AsyncIterator<string>;
  progress?: NodeJS.WriteStream;
  /** Sandbox of exec_command (default: workspace-write with bubblewrap, else danger-full-access). */
  sandbox?: SandboxMode;
}

function outputTexts(item: ResponseItem): string[] {
  const output = (item as { output?: unknown }).output;
  if (typeof output === 'string') return [output];
  if (!Array.isArray(output)) return [];
  return output.map((part: { type: string; text?: string; image_url?: string }) => (part.type === 'input_text' ? part.text ?? '' : `[image ${part.image_url?.slice(0, 40)}…]`));
}

const RUNNING = /^Script running with cell ID (\S+)/;

/**
 * `switchyard run`: runs one cell against the built-in tools in `cwd`, prints its output, and on a
 * yield waits again (or asks, interactively). Exit code 0 when the script completed or was
 * terminated, 1 when it failed.
 */
export async function runCommand(options: RunCommandOptions, write: (text: string) => void): Promise<number> {
  const style = createStyle(options.color);
  const builtins = builtinTools(options.cwd, options.sandbox);
  const runtimeOptions = Object.fromEntries(Object.entries(options.limits ?? {}).filter(([, value]) => value !== undefined));
  const session = createSession({
    toolMode: options.mode === 'direct' ? 'code-mode-only' : options.mode,
    tools: builtins.tools,
    cwd: options.cwd,
    approvalPolicy: 'never',
    codeMode: { runtimeOptions },
  });
  const transcript: Array<{ call: string; output: string[] }> = [];
  let exitCode = 0;
  let spinner: NodeJS.Timeout | undefined;
  const startSpinner = () => {
    if (!options.progress?.isTTY) return;
    const started = Date.now();
    spinner = setInterval(() => options.progress!.write(`\r${style.dim(`cell running… ${((Date.now() - started) / 1000).toFixed(1)}s`)}`), 100);
  };
  const stopSpinner = () => {
    if (spinner) clearInterval(spinner);
    spinner = undefined;
    if (options.progress?.isTTY) options.progress.write('\r\u001b[K');
  };
  try {
    const turn = session.beginTurn();
    const step = await turn.step();
    const pragma = options.yieldTimeMs !== undefined ? `// @exec: {"yield_time_ms": ${options.yieldTimeMs}}\n` : '';
    startSpinner();
    let item = await step.dispatch({ type: 'custom_tool_call', call_id: 'run-1', name: 'exec', input: pragma + options.source });
    stopSpinner();
    for (let round = 2; ; round++) {
      const texts = outputTexts(item);
      transcript.push({ call: item.call_id, output: texts });
      if (!options.json) {
        const [header, ...body] = texts;
        const status = header?.split('\n')[0] ?? '';
        const colored = status.startsWith('Script failed') ? style.red(status) : status.startsWith('Script running') ? style.yellow(status) : style.green(status);
        write(`${colored}\n${style.dim(header?.split('\n')[1] ?? '')}\n`);
        for (const text of body) write(`${text}\n`);
      }
      const running = RUNNING.exec(texts[0] ?? '');
      if (!running) {
        exitCode = (texts[0] ?? '').startsWith('Script failed') ? 1 : 0;
        break;
      }
      let terminate = false;
      if (options.interactive && options.answers) {
        write(`${style.bold('[w]ait')} or ${style.bold('[t]erminate')}? `);
        const next = await options.answers.next();
        const answer = next.done ? 't' : next.value.trim().toLowerCase();
        terminate = answer.startsWith('t');
      }
      startSpinner();
      item = await step.dispatch({
        type: 'function_call',
        call_id: `run-${round}`,
        name: 'wait',
        arguments: JSON.stringify({ cell_id: running[1], terminate, yield_time_ms: options.yieldTimeMs ?? 10_000 }),
      });
      stopSpinner();
    }
    await turn.end();
    if (options.json) write(`${JSON.stringify({ exitCode, responses: transcript }, null, 2)}\n`);
    return exitCode;
  } finally {
    stopSpinner();
    await session.shutdown();
    await builtins.exec.shutdown();
  }
}

/** Lines of a stream as an async iterator (for interactive answers). */
export function lineReader(input: NodeJS.ReadableStream): AsyncIterator<string> {
  return createInterface({ input, crlfDelay: Infinity })[Symbol.asyncIterator]();
}
