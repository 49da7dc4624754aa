// Executors that each break one promise of the contract. Run only by conformance-kit.test.ts in a
// child vitest (its own config), which asserts that exactly the matching check fails.
import type { ToolExecutor, ToolOutput } from '@switchyard/protocol';
import { FunctionToolOutput, defineFunctionTool } from '@switchyard/kit';
import { testExecutor } from '../../src/testing/index';

const base = () =>
  defineFunctionTool({
    name: 'ok_tool',
    description: 'Answers ok.',
    supportsParallelToolCalls: true,
    parameters: { type: 'object', properties: { n: { type: 'number' } } },
    handle: () => FunctionToolOutput.text('ok'),
  });

// spec: a description that changes every time it is read
const unstable = base();
let reads = 0;
testExecutor({
  name: 'unstable-spec',
  executor: { ...unstable, get spec() { return { ...unstable.spec, description: `read ${++reads}` }; } } as ToolExecutor,
  sample: {},
});

// invalid-input: validation is skipped and the handler accepts anything, malformed JSON included
testExecutor({
  name: 'accepts-garbage',
  executor: { ...base(), skipInputValidation: true, handle: async () => FunctionToolOutput.text('ok') },
  sample: {},
});

// payload-kinds: a function spec that claims to take custom payloads only
testExecutor({ name: 'wrong-kinds', executor: { ...base(), payloadKinds: ['custom'] }, sample: {} });

// parallel: one shared output object that answers the first call id it ever saw
let firstId: string | undefined;
const shared: ToolOutput = Object.assign(Object.create(FunctionToolOutput.text('ok')), {
  toResponseItem(callId: string) {
    firstId ??= callId;
    return { type: 'function_call_output', call_id: firstId, output: 'ok' };
  },
});
testExecutor({ name: 'shared-output', executor: { ...base(), handle: async () => shared }, sample: {}, skip: [{ reason: 'only the parallel check is exercised', tests: ['call-id', 'abort', 'hooks', 'lifecycle', 'invalid-input', 'abort-response', 'event-loop', 'results', 'schema'] }] });

// lifecycle: dispose throws the second time
let disposed = false;
testExecutor({
  name: 'dispose-twice',
  executor: {
    ...base(),
    dispose() {
      if (disposed) throw new Error('already disposed');
      disposed = true;
    },
  },
  sample: {},
});

// hooks: a post adapter handing hooks a value JSON cannot carry
testExecutor({
  name: 'bad-hook-response',
  executor: { ...base(), hookPayload: { post: () => ({ input: { toolName: 'ok_tool', toolInput: {} }, response: { at: new Date(0) } as never }) } },
  sample: {},
  skip: [{ reason: 'its sample answer is withheld by design here', tests: ['call-id', 'parallel'] }],
});

// a well-behaved executor: every check passes
testExecutor({ name: 'well-behaved', executor: base(), sample: { n: 1 }, invalid: [{ n: 'one' }] });
