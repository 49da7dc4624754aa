import { describe, expect, it } from 'vitest';
import type { Context, Span, Tracer } from '@opentelemetry/api';
import { createHookEngine } from '@switchyard/hooks';
import type { ResponseItem } from '@switchyard/protocol';
import { createSession, type Session, type SessionOptions } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { useCleanups } from '@switchyard/test-helpers';
import { callItem, execItem, outcome, say, testTools, texts, waitItem } from './helpers';
import { parentSpanOf, recordingTracer, spanIdOf } from '@switchyard/test-helpers/tracing';

const { defer } = useCleanups();

function denyFail() {
  const hooks = createHookEngine({
    functionHooks: [
      {
        event: 'PreToolUse',
        run: (input) =>
          input.tool_name === 'fail' ? { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no failures today' } } : undefined,
      },
    ],
  });
  return defer(hooks, (engine) => engine.close());
}

function openTraced(options: Partial<SessionOptions>): Session {
  const session = createSession({
    toolMode: 'code-mode',
    tools: testTools(),
    codeMode: { runtimeOptions: { nodeSnapshotCheck: 'ignore' } },
    ...options,
  });
  return defer(session, (opened) => opened.shutdown());
}

const CELL = 'const r = await Promise.all([tools.echo({ a: 1 }), tools.echo({ b: 2 }), tools.measure({ s: "abc" }).catch(String)]);\ntext(JSON.stringify(r));';
const SCRIPT: ResponseItem[][] = [
  [callItem('c-echo', 'echo', { x: 1 }), execItem('c-exec', CELL), callItem('c-fail', 'fail', {}), callItem('c-unknown', 'no_such_tool', {})],
  [say('done')],
];

/** The turn's outputs with the wall-time line of exec outputs blanked. */
async function turnOutputs(session: Session): Promise<string[]> {
  const result = await session.runTurn({ model: createScriptedModel(SCRIPT), input: 'go' });
  return result.items
    .filter((item) => item.type.endsWith('_output'))
    .map((item) => `${(item as { call_id: string }).call_id}: ${texts(item).join(' | ').replace(/Wall time [\d.]+ seconds/, 'Wall time')}`);
}

const thrower = (what: string) => () => {
  throw new Error(`${what} broke`);
};

/** Tracers that break in every way a tracer can: each must cost its spans only. */
function hostileTracers(): Array<[string, Tracer]> {
  const brokenSpan = (): Span =>
    ({
      spanContext: thrower('spanContext'),
      setAttribute: thrower('setAttribute'),
      setAttributes: thrower('setAttributes'),
      addEvent: thrower('addEvent'),
      addLink: thrower('addLink'),
      addLinks: thrower('addLinks'),
      setStatus: thrower('setStatus'),
      updateName: thrower('updateName'),
      end: thrower('end'),
      isRecording: thrower('isRecording'),
      recordException: thrower('recordException'),
    }) as unknown as Span;
  const tracer = (startSpan: (name: string, options?: unknown, context?: Context) => unknown): Tracer => ({ startSpan, startActiveSpan: thrower('startActiveSpan') }) as unknown as Tracer;
  let calls = 0;
  return [
    ['startSpan throws', tracer(thrower('startSpan'))],
    ['startSpan returns undefined', tracer(() => undefined)],
    ['startSpan returns null', tracer(() => null)],
    ['every span method throws', tracer(brokenSpan)],
    ['spans are plain strings', tracer(() => 'not a span')],
    ['every other startSpan throws', tracer(() => (++calls % 2 ? brokenSpan() : thrower('startSpan')()))],
  ];
}

describe('tracing under abuse', () => {
  it('a broken tracer never changes what the model sees, and the next turn works', async () => {
    const reference = await turnOutputs(openTraced({ hooks: denyFail() }));
    expect(reference).toContain('c-fail: Tool call blocked by PreToolUse hook: no failures today. Tool: fail');
    expect(reference.find((line) => line.startsWith('c-exec:'))).toContain('[{"a":1},{"b":2},{"length":3}]');
    const tried: string[] = [];
    for (const [name, tracer] of hostileTracers()) {
      const session = openTraced({ hooks: denyFail(), tracer });
      expect(await turnOutputs(session), name).toEqual(reference);
      expect(await turnOutputs(session), `${name}, second turn`).toEqual(reference);
      tried.push(name);
    }
    console.log(`[reliability] hostile tracers: ${tried.length} kinds (${tried.join('; ')}), outputs identical to an untraced session`);
  });

  it('a cell that yields across turns keeps its span: later nested calls are its children, and every span ends', async () => {
    const { exporter, open: unended, tracer } = recordingTracer('reliability');
    const session = openTraced({ tracer });
    const code = 'await tools.echo({ first: true });\nyield_control();\nawait new Promise((resolve) => setTimeout(resolve, 30));\nawait tools.echo({ second: true });\ntext("finished");';
    const first = await session.runTurn({ model: createScriptedModel([[execItem('c-exec', code)], [say('waiting')]]), input: 'start' });
    const running = outcome(first.items.find((item) => item.type === 'custom_tool_call_output') as never);
    expect(running.status).toBe('running');
    const cellId = running.cellId!;
    const second = await session.runTurn({
      model: createScriptedModel([[waitItem('c-wait', { cell_id: cellId, yield_time_ms: 20_000 })], [say('ok')]]),
      input: 'continue',
    });
    expect(texts(second.items.find((item) => item.type === 'function_call_output'))).toContain('finished');
    await session.shutdown();

    const spans = exporter.getFinishedSpans();
    const turns = spans.filter((span) => span.name === 'invoke_agent');
    expect(turns).toHaveLength(2);
    const cell = spans.find((span) => span.name === 'code_mode.cell')!;
    expect(cell.attributes['switchyard.cell.id']).toBe(cellId);
    expect(cell.attributes['switchyard.cell.status']).toBe('completed');
    const exec = spans.find((span) => span.name === 'execute_tool exec')!;
    expect(parentSpanOf(cell)).toBe(spanIdOf(exec));
    expect(parentSpanOf(exec)).toBe(spanIdOf(turns.find((turn) => turn.spanContext().traceId === exec.spanContext().traceId)!));
    const nested = spans.filter((span) => span.name === 'execute_tool echo');
    expect(nested).toHaveLength(2);
    expect(nested.every((span) => parentSpanOf(span) === spanIdOf(cell))).toBe(true);
    // the wait call is in the second turn's trace, the cell (and its calls) in the first's
    const wait = spans.find((span) => span.name === 'execute_tool wait')!;
    expect(wait.spanContext().traceId).not.toBe(cell.spanContext().traceId);
    expect(unended.size).toBe(0);
  });

  it('two sessions sharing one hook engine: each tracer gets its own hook runs only', async () => {
    const hooks = denyFail();
    const a = recordingTracer('reliability');
    const b = recordingTracer('reliability');
    const sessions = [openTraced({ hooks, tracer: a.tracer }), openTraced({ hooks, tracer: b.tracer })];
    await Promise.all(sessions.map((session) => turnOutputs(session)));
    for (const { exporter, open: unended } of [a, b]) {
      const spans = exporter.getFinishedSpans();
      const ids = new Set(spans.map(spanIdOf));
      const hookSpans = spans.filter((span) => span.name === 'hook PreToolUse');
      // echo, exec, fail (blocked) and the three nested calls; the unknown tool is refused before its hooks
      expect(hookSpans).toHaveLength(6);
      expect(hookSpans.every((span) => ids.has(parentSpanOf(span)!))).toBe(true);
      expect(unended.size).toBe(0);
    }
  });

  it('many concurrent cells: every nested call is a child of its own cell, and shutdown ends a hanging one', async () => {
    const { exporter, open: unended, tracer } = recordingTracer('reliability');
    const session = openTraced({ tracer });
    const turn = session.beginTurn();
    const step = await turn.step();
    const CELLS = 20;
    const CALLS = 10;
    const code = (index: number) => `await Promise.all(Array.from({ length: ${CALLS} }, (_, k) => tools.echo({ cell: ${index}, k })));\ntext("ok ${index}");`;
    const results = await Promise.all(Array.from({ length: CELLS }, (_, index) => step.dispatch(execItem(`c-${index}`, code(index)))));
    expect(results.map((item) => outcome(item).output)).toEqual(Array.from({ length: CELLS }, (_, index) => [`ok ${index}`]));
    const hanging = outcome(await step.dispatch(execItem('c-hang', '// @exec: {"yield_time_ms": 50}\nawait tools.hang({ id: "h" });')));
    expect(hanging.status).toBe('running');
    await turn.end();
    await session.shutdown();

    const spans = exporter.getFinishedSpans();
    const cells = new Map(spans.filter((span) => span.name === 'code_mode.cell').map((span) => [span.attributes['switchyard.cell.id'], span]));
    expect(cells.size).toBe(CELLS + 1);
    const nested = spans.filter((span) => span.name === 'execute_tool echo');
    expect(nested).toHaveLength(CELLS * CALLS);
    for (const span of nested) expect(parentSpanOf(span)).toBe(spanIdOf(cells.get(span.attributes['switchyard.cell.id'])!));
    const hangCell = [...cells.values()].find((span) => span.attributes['switchyard.cell.exec_call_id'] === 'c-hang')!;
    expect(['terminated', 'failed']).toContain(hangCell.attributes['switchyard.cell.status']);
    expect(unended.size).toBe(0);
    console.log(`[reliability] tracing: ${CELLS} concurrent cells × ${CALLS} nested calls, ${spans.length} spans, 0 left open`);
  });
});
