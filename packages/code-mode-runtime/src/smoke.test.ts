import { afterAll, expect, it } from 'vitest';
import { setup } from '../test/helpers';

const env = setup({ echo: (r) => r.input as never });
afterAll(() => env.runtime.shutdown());

it('smoke', async () => {
  const o = await env.run(`text('hi'); const r = await tools.echo({a:1}); text(r); store('k', 1);`);
  console.log(JSON.stringify(o));
  const o2 = await env.run(`text(load('k')); throw new Error('boom')`);
  console.log(JSON.stringify(o2));
  const o3 = await env.run(`import x from 'fs'`);
  console.log(JSON.stringify(o3));
  const o4 = await env.run(`let x: number = 1; text(x)`);
  console.log(JSON.stringify(o4));
  const o5 = await env.run(`while(true){}`, { yieldTimeMs: 100 });
  console.log(JSON.stringify(o5));
  console.log(JSON.stringify(await env.session.terminate(o5.cellId)));
});
