/**
 * Peer comparison: the same nested-call scripts through Switchyard's full stack and through
 * `@utcp/code-mode` (what a user might pick instead), in the same run. `@utcp/code-mode` asks for
 * isolated-vm ^6 (Node 22+); the workspace overrides that peer to isolated-vm 5 (pnpm-workspace.yaml
 * `peerDependencyRules`), whose API it uses identically. Its tools are synchronous inside the isolate
 * (`applySyncPromise`), so `Promise.all` cannot overlap them; ours are promises.
 *
 * The UTCP client logs every tool call with `console.log`; that write is silenced while it runs so
 * the table stays readable (this flatters UTCP slightly).
 */
import { CodeModeUtcpClient } from '@utcp/code-mode';
import { CallTemplateSerializer, CommunicationProtocol, Serializer, type CallTemplate } from '@utcp/sdk';
import { compare, timeMedian, type Bench, type BenchFigure } from '../harness';
import { openBenchStack } from '../switchyard-stack';

const SEQUENTIAL_CALLS = 200;
const PARALLEL_CALLS = 100;
const SLEEP_MS = 20;

/** An in-process UTCP transport serving `bench.noop` and `bench.nap` (the same two tools as ours). */
class BenchProtocol extends CommunicationProtocol {
  async registerManual(_caller: unknown, template: CallTemplate) {
    const tool = (name: string, properties: Record<string, unknown>) => ({
      name,
      description: name,
      inputs: { type: 'object', properties },
      outputs: { type: 'object', properties: {} },
      tags: [],
      tool_call_template: template,
    });
    return {
      manualCallTemplate: template,
      success: true,
      errors: [],
      manual: { utcp_version: '1.0.0', manual_version: '1.0.0', tools: [tool('noop', {}), tool('nap', { ms: { type: 'number' } })] },
    } as never;
  }
  async deregisterManual() {}
  async callTool(_caller: unknown, name: string, args: Record<string, unknown>) {
    if (name.endsWith('nap')) await new Promise((resolve) => setTimeout(resolve, Number(args.ms)));
    return null;
  }
  async *callToolStreaming(): AsyncGenerator<unknown, void, unknown> {}
  override async close() {}
}

class PassThrough extends Serializer<CallTemplate> {
  toDict(template: CallTemplate) {
    return { ...template };
  }
  validateDict(template: Record<string, unknown>) {
    return template as CallTemplate;
  }
}

async function utcpClient(): Promise<(code: string) => Promise<unknown>> {
  CallTemplateSerializer.registerCallTemplate('switchyard-bench', new PassThrough(), true);
  CommunicationProtocol.communicationProtocols['switchyard-bench'] = new BenchProtocol();
  const client = await CodeModeUtcpClient.create();
  const quiet = async <T>(body: () => Promise<T>) => {
    const log = console.log;
    console.log = () => {};
    try {
      return await body();
    } finally {
      console.log = log;
    }
  };
  const registered = await quiet(() => client.registerManual({ name: 'bench', call_template_type: 'switchyard-bench' }));
  if (!registered.success) throw new Error(`UTCP manual not registered: ${registered.errors.join('; ')}`);
  return async (code) => {
    const { result, logs } = await quiet(() => client.callToolChain(code));
    if (result !== 'ok') throw new Error(`UTCP script failed: ${logs.join('\n')}`);
    return result;
  };
}

const bench: Bench = {
  name: 'peer: @utcp/code-mode',
  async run(): Promise<BenchFigure[]> {
    const utcp = await utcpClient();
    const stack = await openBenchStack();
    const ours = async (code: string) => {
      const texts = await stack.exec(code);
      if (texts[0] !== 'ok') throw new Error(`script failed: ${texts.join('\n')}`);
    };
    const figures: BenchFigure[] = [];
    try {
      const sequential = (call: string, done: string) => `for (let i = 0; i < ${SEQUENTIAL_CALLS}; i++) await ${call};\n${done}`;
      const oursSequential = await timeMedian(() => ours(sequential('tools.noop()', `text('ok');`)), 7, 2);
      const utcpSequential = await timeMedian(() => utcp(sequential('bench.noop({})', `return 'ok';`)), 7, 2);
      figures.push(
        compare(`${SEQUENTIAL_CALLS} sequential nested no-op calls (whole script)`, oursSequential, 'ms', { name: '@utcp/code-mode 1.2.12', value: utcpSequential }, {
          note: 'script start included on both sides, median of 7',
        }),
      );

      const parallel = (call: string, done: string) => `await Promise.all(Array.from({ length: ${PARALLEL_CALLS} }, () => ${call}));\n${done}`;
      const oursParallel = await timeMedian(() => ours(parallel('tools.noop()', `text('ok');`)), 9, 2);
      const utcpParallel = await timeMedian(() => utcp(parallel('bench.noop({})', `return 'ok';`)), 9, 2);
      figures.push(
        compare(`${PARALLEL_CALLS} parallel nested no-op calls (Promise.all)`, oursParallel, 'ms', { name: '@utcp/code-mode 1.2.12', value: utcpParallel }, {
          note: 'median of 9',
        }),
      );

      const oursNaps = await timeMedian(() => ours(parallel(`tools.nap({ ms: ${SLEEP_MS} })`, `text('ok');`)), 5, 1);
      const utcpNaps = await timeMedian(() => utcp(parallel(`bench.nap({ ms: ${SLEEP_MS} })`, `return 'ok';`)), 5, 1);
      figures.push(
        compare(`${PARALLEL_CALLS} parallel nested calls sleeping ${SLEEP_MS} ms`, oursNaps, 'ms', { name: '@utcp/code-mode 1.2.12', value: utcpNaps }, {
          note: `UTCP runs them one after another (applySyncPromise), median of 5`,
        }),
      );
    } finally {
      await stack.close();
    }
    return figures;
  },
};

export default bench;
