/**
 * What a session's spans may carry (issue 47, row 8): a tool error and a cell error that carry a
 * secret. Error texts recorded in spans (exception events, the status, `error.type`-side texts)
 * are bounded as tool descriptions are (1,024 characters); a failed cell's error is what the
 * model's code wrote, so it is content: recorded only when the host opts in (`recordContent`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { defineFunctionTool } from '@switchyard/kit';
import { createSession, type SessionOptions } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { callItem, execItem, texts } from './helpers';
import { report } from '../src/profile';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TOOL_SECRET = 'postgres://app:hunter2-tool@db.internal/prod';
const CELL_SECRET = 'sk-live-cell-5f1c0e';

/** A tool that fails with a 2,000,000-character message ending in a connection string. */
const leaky = defineFunctionTool({
  name: 'connect_db',
  description: 'Connects to the database.',
  parameters: { type: 'object', properties: {} },
  handle: () => {
    throw new Error(`connection refused after ${'retrying… '.repeat(200_000)} (${TOOL_SECRET})`);
  },
});

/** Every text a span holds: attributes, status message, event names and event attributes. */
function spanTexts(span: ReadableSpan): string[] {
  const out: string[] = [];
  const add = (value: unknown) => {
    if (typeof value === 'string') out.push(value);
    else if (Array.isArray(value)) for (const entry of value) add(entry);
  };
  for (const value of Object.values(span.attributes)) add(value);
  add(span.status.message);
  for (const event of span.events) {
    add(event.name);
    for (const value of Object.values(event.attributes ?? {})) add(value);
  }
  return out;
}

/** One turn: a direct call of the failing tool and a cell that throws the secret. */
async function tracedTurn(tracer: Partial<SessionOptions['tracer']> & object) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  cleanups.push(() => provider.shutdown());
  const session = createSession({
    toolMode: 'code-mode',
    tools: [leaky],
    codeMode: { runtimeOptions: { nodeSnapshotCheck: 'ignore' } },
    tracer: { tracer: provider.getTracer('reliability'), ...tracer },
  });
  cleanups.push(() => session.shutdown());
  const result = await session.runTurn({
    model: createScriptedModel([
      [callItem('c-db', 'connect_db', {}), execItem('c-cell', `throw new Error(${JSON.stringify(`the key is ${CELL_SECRET}`)});`)],
      [{ type: 'message', role: 'assistant', content: 'done' }],
    ]),
    input: 'go',
  });
  const outputs = result.items.filter((item) => item.type.endsWith('_output')).map((item) => texts(item).join('\n'));
  const spans = exporter.getFinishedSpans();
  return { spans, outputs, all: spans.flatMap(spanTexts) };
}

describe('error texts in spans (issue 47, row 8)', () => {
  it('tool errors are cut at 1,024 characters; a cell error is not recorded unless the host opts in (control: it then is)', async () => {
    const { spans, outputs, all } = await tracedTurn({});
    // The model did see both failures (the secrets are in its outputs: the tool's and the cell's own text).
    expect(outputs.join('\n')).toContain(CELL_SECRET);
    const tool = spans.find((span) => span.name === 'execute_tool connect_db')!;
    const cell = spans.find((span) => span.name === 'code_mode.cell')!;
    expect(tool.attributes['error.type']).toBeDefined();
    expect(cell.attributes['error.type']).toBe('SCRIPT_ERROR');
    const longest = Math.max(...all.map((text) => text.length));
    expect(longest).toBeLessThanOrEqual(1_024);
    expect(all.join('\n')).not.toContain(TOOL_SECRET);
    expect(all.join('\n')).not.toContain(CELL_SECRET);
    // the tool's error still names what failed, cut
    expect(tool.status.message).toMatch(/^tool connect_db failed: connection refused after retrying/);

    // Control: with content recorded, the cell's error (the model's text) is on its span, still bounded.
    const opted = await tracedTurn({ recordContent: true });
    const openCell = opted.spans.find((span) => span.name === 'code_mode.cell')!;
    expect(spanTexts(openCell).join('\n')).toContain(CELL_SECRET);
    expect(opted.spans.find((span) => span.name === 'execute_tool connect_db')!.attributes['gen_ai.tool.call.arguments']).toBe('{}');
    expect(tool.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(Math.max(...opted.all.map((text) => text.length))).toBeLessThanOrEqual(1_024);
    expect(opted.all.join('\n')).not.toContain(TOOL_SECRET);
    report('span content', `a 2,000,000-character tool error and a cell error with a secret: longest span text ${longest} characters, neither secret recorded; with recordContent the cell error is (control)`);
  });
});
