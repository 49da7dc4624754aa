// The usual plugin bugs, one per executor, each of which the conformance kit must fail with a
// one-line reason (conformance-kit.test.ts runs this file in a child vitest and reads the report).
import { defineFunctionTool } from '@switchyard/kit';
import { testExecutor } from '../../src/testing/index';
import { sleep } from '@switchyard/test-helpers';

const abortableSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

// abort ignored: a fast sample (1 s, far under the old 10 s threshold) that never looks at its signal
testExecutor({
  executor: () =>
    defineFunctionTool({
      name: 'seeded_abort_ignored',
      description: 'Sleeps without listening to its signal.',
      parameters: { type: 'object', properties: {} },
      supportsParallelToolCalls: true,
      handle: async () => (await sleep(1_000), { ok: true }),
    }),
  sample: {},
  generatedRuns: 2,
});

// a handler blocking the event loop for 1.5 s per call (synchronous work)
testExecutor({
  executor: () =>
    defineFunctionTool({
      name: 'seeded_blocking',
      description: 'Computes synchronously.',
      parameters: { type: 'object', properties: {} },
      supportsParallelToolCalls: true,
      handle: () => {
        const end = Date.now() + 1_500;
        while (Date.now() < end);
        return { ok: true };
      },
    }),
  sample: {},
  generatedRuns: 2,
});

// a cycle that appears only beyond the sample input (depth 3 and up)
testExecutor({
  executor: () =>
    defineFunctionTool<{ depth: number }>({
      name: 'seeded_cycle',
      description: 'Builds a tree of the given depth.',
      parameters: { type: 'object', properties: { depth: { type: 'integer', minimum: 0, maximum: 8 } }, required: ['depth'], additionalProperties: false },
      supportsParallelToolCalls: true,
      handle: ({ args }) => {
        const root: Record<string, unknown> = { level: 0 };
        let node = root;
        for (let level = 1; level <= args.depth; level++) node = (node.child = { level }) as Record<string, unknown>;
        if (args.depth >= 3) node.parent = root;
        return root;
      },
    }),
  sample: { depth: 1 },
});

// a parameters schema that does not match what the handler reads (`query`, declared `sql`)
testExecutor({
  executor: () =>
    defineFunctionTool<{ sql?: string; query?: string }>({
      name: 'seeded_undeclared_read',
      description: 'Runs a query.',
      parameters: { type: 'object', properties: { sql: { type: 'string' } }, required: ['sql'] },
      supportsParallelToolCalls: true,
      handle: ({ args }) => ({ rows: [args.query ?? args.sql] }),
    }),
  sample: { sql: 'select 1' },
});

// a parameters schema wider than the handler accepts (`tags` optional, the handler maps it)
testExecutor({
  executor: () =>
    defineFunctionTool<{ name: string; tags?: string[] }>({
      name: 'seeded_wide_schema',
      description: 'Labels a name with tags.',
      parameters: { type: 'object', properties: { name: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['name'] },
      supportsParallelToolCalls: true,
      handle: ({ args }) => ({ label: `${args.name}: ${args.tags!.map((tag) => tag.toUpperCase()).join(',')}` }),
    }),
  sample: { name: 'a', tags: ['x'] },
});

// an outputSchema describing the wrong shape (it says `rows`, the handler answers `count`)
testExecutor({
  executor: () =>
    defineFunctionTool<{ table: string }>({
      name: 'seeded_output_schema',
      description: 'Counts rows.',
      parameters: { type: 'object', properties: { table: { type: 'string' } }, required: ['table'] },
      outputSchema: { type: 'object', properties: { rows: { type: 'array' } }, required: ['rows'] },
      supportsParallelToolCalls: true,
      handle: ({ args }) => ({ count: args.table.length }),
    }),
  sample: { table: 'users' },
});

// a correct plugin: abortable, yields, declares what it reads, answers the shape it promises
testExecutor({
  executor: () =>
    defineFunctionTool<{ sql: string; wait?: boolean; limit?: number }>({
      name: 'query',
      namespace: 'sql',
      description: 'Runs a read-only query.',
      parameters: {
        type: 'object',
        properties: { sql: { type: 'string' }, wait: { type: 'boolean' }, limit: { type: 'integer', minimum: 1, maximum: 100 } },
        required: ['sql'],
        additionalProperties: false,
      },
      outputSchema: { type: 'object', properties: { rows: { type: 'array', items: { type: 'string' } } }, required: ['rows'] },
      supportsParallelToolCalls: true,
      async handle({ args, signal }) {
        if (args.wait) await abortableSleep(400, signal);
        return { rows: [args.sql].slice(0, args.limit ?? 1) };
      },
    }),
  sample: { sql: 'select 1', wait: true },
  invalid: [{ sql: 1 }],
  generatedRuns: 10,
});

// a correct sleep whose schema admits any duration: `generatedParameters` bounds what the results
// and schema checks generate (a generated 1e9 ms would run out the check timeout), not a skip
testExecutor({
  executor: () =>
    defineFunctionTool<{ ms?: number }>({
      name: 'bounded_sleep',
      description: 'Sleeps, honouring its signal.',
      parameters: { type: 'object', properties: { ms: { type: 'number' } }, additionalProperties: false },
      supportsParallelToolCalls: true,
      async handle({ args, signal }) {
        await abortableSleep(args.ms ?? 60_000, signal);
        return { slept: args.ms ?? 60_000 };
      },
    }),
  sample: { ms: 400 },
  generatedParameters: { type: 'object', properties: { ms: { type: 'number', minimum: 0, maximum: 50 } }, required: ['ms'] },
  timeout: 20_000,
});
