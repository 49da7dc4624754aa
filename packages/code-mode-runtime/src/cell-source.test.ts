import { afterAll, describe, expect, it } from 'vitest';
import { stripTypes } from './cell-source';
import { setup } from '../test/helpers';

const env = setup({ echo: (request) => request.input as never });
afterAll(() => env.runtime.shutdown());

const TYPESCRIPT = `interface Row { id: number; name?: string }
type Pair<T> = [T, T];
const rows: Row[] = (await tools.echo({ rows: [{ id: 1 }, { id: 2, name: 'b' }] }) as { rows: Row[] }).rows;
function total<T extends { id: number }>(items: T[]): number { return items.reduce((sum, item) => sum + item.id, 0); }
const pair: Pair<string> = ['x', 'y'];
text(total(rows) satisfies number);
text(pair.join(rows[1]!.name as string));
throw new Error('line seven');`;

describe('TypeScript input', () => {
  it('strips types before evaluation, keeping line numbers for stack traces', async () => {
    const observation = await env.run(TYPESCRIPT);
    expect(observation.items).toEqual([
      { type: 'input_text', text: '3' },
      { type: 'input_text', text: 'xby' },
    ]);
    expect(observation.kind === 'completed' && observation.error).toMatch(/^Error: line seven\n {4}at exec_main\.mjs:8:7/);
  });

  it('typescript: true always strips, typescript: false never does', async () => {
    expect(await env.texts(`const n: number = 2; text(n);`, { typescript: true })).toEqual(['2']);
    const plain = await env.run(`const n: number = 2; text(n);`, { typescript: false });
    expect(plain.kind === 'completed' && plain.error).toMatch(/^SyntaxError: /);
  });

  it('reports the JavaScript syntax error when the source is neither valid JavaScript nor TypeScript', async () => {
    expect(await env.run(`let x = ;`)).toMatchObject({ error: "SyntaxError: Unexpected token ';'" });
  });

  it('still refuses imports in TypeScript sources', async () => {
    expect(await env.run(`import type { A } from './a';\nimport { b } from 'node:b';\nconst c: number = 1;`)).toMatchObject({
      error: 'Unsupported import in exec: node:b',
    });
  });

  it('stripTypes leaves JavaScript semantics and line structure alone', () => {
    const stripped = stripTypes(TYPESCRIPT);
    expect(stripped.split('\n')).toHaveLength(TYPESCRIPT.split('\n').length);
    expect(stripped).not.toMatch(/interface|: number|satisfies/);
  });
});
