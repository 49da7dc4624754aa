import { isSwitchyardError, type CellHost, type CellToolDescriptor, type CellToolRequest, type CodeModeSession, type JsonValue } from '@switchyard/protocol';
import { PassThrough } from 'node:stream';
import type { CodeModeRuntimeOptions } from '../src/index';
import { createCodeModeRuntime } from '../src/index';
import { connectRuntime, createStreamTransport, parseFrame, serveRuntime, type RuntimePlacement } from '../src/protocol-entry';

/** The isolation these tests run under: the default project uses worker processes, the `in-process` project isolates in the test process. */
export const isolation = (process.env.SWITCHYARD_TEST_ISOLATION ?? 'process') as 'process' | 'in-process';

/** A tool a test invents: the handler gets the request and returns (or throws) the result. */
export type TestTool = (request: CellToolRequest) => Promise<JsonValue> | JsonValue;

/** A recording CellHost over invented tools. */
export function createTestHost(tools: Record<string, TestTool> = {}) {
  const calls: CellToolRequest[] = [];
  const notifications: Array<{ cellId: string; text: string }> = [];
  const closed: string[] = [];
  const host: CellHost = {
    async invokeTool(request) {
      calls.push(request);
      const tool = tools[request.tool];
      if (!tool) throw `tool \`${request.tool}\` is not enabled in exec`;
      return tool(request);
    },
    notify(event) {
      notifications.push(event);
    },
    cellClosed(cellId) {
      closed.push(cellId);
    },
  };
  return { host, calls, notifications, closed };
}

export { sleep, until } from '@switchyard/test-helpers';

export const fnDescriptor = (name: string, description = `${name} tool`): CellToolDescriptor => ({ name, description, kind: 'function' });
export const freeformDescriptor = (name: string, description = `${name} tool`): CellToolDescriptor => ({ name, description, kind: 'freeform' });

/** A runtime + session pair; `run` creates a cell and waits up to 10 s for it (most tests complete well before). */
export function setup(tools: Record<string, TestTool> = {}, options: CodeModeRuntimeOptions = {}) {
  const runtime = createCodeModeRuntime({ isolation, ...options });
  const recorder = createTestHost(tools);
  // One tenant for the engine's behaviour tests: their sessions may share warm workers, as sessions
  // of one tenant do (tenant isolation is tested in process-runtime.test.ts and tools/reliability).
  const session: CodeModeSession = runtime.openSession(recorder.host, { tenant: 'engine-tests' });
  const descriptors = Object.keys(tools).map((name) => fnDescriptor(name));
  const run = async (source: string, extra: { tools?: CellToolDescriptor[]; yieldTimeMs?: number; typescript?: boolean } = {}) => {
    const { observation } = await session.createCell({
      source,
      tools: extra.tools ?? descriptors,
      yieldTimeMs: extra.yieldTimeMs ?? 10_000,
      typescript: extra.typescript,
    });
    return observation;
  };
  /** The texts of a run; a failure or a non-completion is appended as a last `[…]` entry. */
  const texts = async (source: string, extra: Parameters<typeof run>[1] = {}) => {
    const observation = await run(source, extra);
    const texts = observation.items.map((item) => (item.type === 'input_text' ? item.text : `[image ${item.image_url} ${item.detail}]`));
    if (observation.kind !== 'completed') texts.push(`[${observation.kind}]`);
    else if (observation.error !== undefined) texts.push(`[error ${observation.error}]`);
    return texts;
  };
  return { runtime, session, run, texts, ...recorder };
}

/** The code and message of a `SwitchyardError` the promise rejects with (anything else fails the test). */
export async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (!isSwitchyardError(error)) throw error;
    return { code: error.code, message: error.message };
  }
  throw new Error('expected a rejection');
}

/** A placement onto a runtime server in this process that records every frame the host sends it. */
export function recordingPlacement() {
  const sent: unknown[] = [];
  const placement: RuntimePlacement = {
    async acquire(sink) {
      const toRuntime = new PassThrough();
      const toHost = new PassThrough();
      serveRuntime({ transport: createStreamTransport({ readable: toRuntime, writable: toHost }) });
      const transport = createStreamTransport({ readable: toHost, writable: toRuntime });
      const recording = { ...transport, send: (frame: string) => (sent.push(...parseFrame(frame)), transport.send(frame)) };
      const client = await connectRuntime({ transport: recording, onEvent: (message) => sink.onEvent(message), onLost: (cause) => sink.onLost(cause) });
      return { client, key: 's1', hold: () => () => {}, release: () => {} };
    },
  };
  return { placement, sent };
}
