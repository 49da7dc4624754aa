/**
 * Zero-token waiting: a task starts a background job in a Code Mode cell and then needs its
 * result. Side by side, with the same scripted agent:
 * - polling (the reference's behaviour): the cell yields after `exec`'s default 10 s, and the
 *   model calls `wait` (default 10 s yield) until the cell completes, then answers;
 * - wake-up delivery (`createSession({ background: true })` + `session.wake({ model })`): the
 *   model ends its turn after `exec` yields; the completion arrives in the next request of a turn
 *   the session starts itself.
 * Counted: model requests after the one that started the job, `wait` calls, and input tokens
 * (o200k tokens of every request's `tools` + `input`, summed over the run). Time is real: the
 * 30 s job runs on both sides at once (about 30 s). `BENCH_WAKE_SCALE=0.1` divides every
 * duration (job, yields) by 10 for a quick run; the counts depend only on job ÷ yield.
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { ModelRequest, ResponseItem } from '@switchyard/protocol';
import { createSession, type Session } from '@switchyard/session';
import { createScriptedModel, type ScriptedModel } from '@switchyard/session/testing';
import { compare, type Bench, type BenchFigure } from '../harness';

const SCALE = Number(process.env.BENCH_WAKE_SCALE ?? 1);

interface Run {
  requestsAfterStart: number;
  waits: number;
  inputTokens: number;
  inputTokensAfterStart: number;
  seconds: number;
}

function textOf(item: ResponseItem | undefined): string {
  const output = (item as { output?: string | Array<{ text?: string }> } | undefined)?.output;
  if (output === undefined) return '';
  return typeof output === 'string' ? output : output.map((part) => part.text ?? '').join('\n');
}

/** The scripted agent: start the job, then poll (or end the turn), then report the result. */
function agent(mode: 'poll' | 'wake', jobMs: number, yieldMs: number): ScriptedModel {
  const job = `// @exec: {"yield_time_ms": ${yieldMs}}\nawait new Promise((resolve) => setTimeout(resolve, ${jobMs}));\ntext('job result: 42');`;
  return createScriptedModel((request: ModelRequest) => {
    const last = request.input[request.input.length - 1];
    const text = textOf(last);
    if (text.includes('job result: 42')) return [{ type: 'message', role: 'assistant', content: 'The job finished: the result is 42.' }];
    const running = /Script running with cell ID (\S+)/.exec(text);
    if (running && mode === 'poll') {
      const waits = request.input.filter((item) => item.type === 'function_call').length;
      return [{ type: 'function_call', call_id: `wait-${waits + 1}`, name: 'wait', arguments: JSON.stringify({ cell_id: running[1], yield_time_ms: yieldMs }) }];
    }
    if (running) return [{ type: 'message', role: 'assistant', content: 'The job is running; I will report its result when it finishes.' }];
    return [{ type: 'custom_tool_call', call_id: 'exec-1', name: 'exec', input: job }];
  });
}

function count(model: ScriptedModel, started: number): Run {
  const tokens = model.requests.map((request) => countTokens(JSON.stringify(request.tools)) + countTokens(JSON.stringify(request.input)));
  const inputTokens = tokens.reduce((sum, value) => sum + value, 0);
  const last = model.requests[model.requests.length - 1];
  const waits = last.input.filter((item) => item.type === 'function_call' && (item as { name: string }).name === 'wait').length;
  return { requestsAfterStart: model.requests.length - 1, waits, inputTokens, inputTokensAfterStart: inputTokens - tokens[0], seconds: (Date.now() - started) / 1000 };
}

const TASK = 'Run the nightly job in the background, then tell me its result.';

async function polling(jobMs: number, yieldMs: number): Promise<Run> {
  const session = createSession({ toolMode: 'code-mode-only', tools: [] });
  const model = agent('poll', jobMs, yieldMs);
  const started = Date.now();
  try {
    await session.runTurn({ model, input: TASK });
    return count(model, started);
  } finally {
    await session.shutdown();
  }
}

async function waking(jobMs: number, yieldMs: number): Promise<Run> {
  const session: Session = createSession({ toolMode: 'code-mode-only', tools: [], background: true });
  const model = agent('wake', jobMs, yieldMs);
  const started = Date.now();
  try {
    let turns = 0;
    const woken = new Promise<void>((resolve) => session.on('turn-end', () => ++turns === 2 && resolve()));
    session.wake({ model });
    await session.runTurn({ model, input: TASK });
    await woken;
    return count(model, started);
  } finally {
    await session.shutdown();
  }
}

function figures(label: string, wake: Run, poll: Run): BenchFigure[] {
  const note = `wake ${wake.seconds.toFixed(1)} s, polling ${poll.seconds.toFixed(1)} s wall`;
  return [
    compare(`${label}: model requests after the start`, wake.requestsAfterStart, 'requests', { name: 'polling wait', value: poll.requestsAfterStart }, { note }),
    compare(`${label}: wait calls`, wake.waits, 'calls', { name: 'polling wait', value: poll.waits }),
    compare(`${label}: input tokens (whole run)`, wake.inputTokens, 'tokens', { name: 'polling wait', value: poll.inputTokens }, { note: 'o200k of tools + input per request, summed' }),
    compare(`${label}: input tokens after the start`, wake.inputTokensAfterStart, 'tokens', { name: 'polling wait', value: poll.inputTokensAfterStart }, { note: 'the requests after the one that started the job' }),
  ];
}

const bench: Bench = {
  name: 'background wake-up',
  async run() {
    const yieldMs = Math.round(10_000 * SCALE);
    const scaled = SCALE === 1 ? '' : ` (scaled ×${SCALE})`;
    // the 30 s job of the issue, and a 5-minute one (same 10 s yield) scaled down 10× in time only
    const [wake30, poll30, wake300, poll300] = await Promise.all([
      waking(30_000 * SCALE, yieldMs),
      polling(30_000 * SCALE, yieldMs),
      waking(30_000 * SCALE, yieldMs / 10),
      polling(30_000 * SCALE, yieldMs / 10),
    ]);
    return [...figures(`30 s job, 10 s yield${scaled}`, wake30, poll30), ...figures(`300 s job, 10 s yield (run 10× faster)${scaled}`, wake300, poll300)];
  },
};
export default bench;
