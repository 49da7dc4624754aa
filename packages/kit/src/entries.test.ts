// The built entries (dist/): the root and `@switchyard/kit/internal` share one copy of each class,
// in ESM and in CJS (tsup's CJS splitting rewrites classes; the build keeps their names).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dist = new URL('../dist/', import.meta.url);

describe('the built entries', () => {
  it('CJS: both entries load one shared chunk and keep class names', () => {
    // A plain node process: the test runner's resolve conditions would load the sources instead.
    const script = `
      const root = require('./index.cjs');
      const internal = require('./internal.cjs');
      const failure = new internal.FailureToolOutput('no');
      console.log(JSON.stringify({
        chunks: Object.keys(require.cache).map((file) => file.slice(process.cwd().length + 1)).filter((file) => file.startsWith('chunk-')).length,
        names: [root.FunctionToolOutput.name, root.JsonToolOutput.name, internal.FailureToolOutput.name, internal.ToolSearchOutput.name],
        functionOutput: root.toToolOutput('text') instanceof root.FunctionToolOutput,
        same: root.toToolOutput(failure) === failure,
      }));`;
    const { NODE_OPTIONS: _, ...env } = process.env;
    const out = execFileSync(process.execPath, ['-e', script], { cwd: fileURLToPath(dist), env, encoding: 'utf8', timeout: 30_000 });
    expect(JSON.parse(out)).toEqual({ chunks: 1, names: ['FunctionToolOutput', 'JsonToolOutput', 'FailureToolOutput', 'ToolSearchOutput'], functionOutput: true, same: true });
  });

  it('each format defines the shared sources once (a class or function both entries use)', () => {
    const files = readdirSync(dist);
    for (const extension of ['.js', '.cjs']) {
      const texts = files.filter((file) => file.endsWith(extension)).map((file) => readFileSync(new URL(file, dist), 'utf8'));
      for (const definition of [/\bSerdeError = (?:\(\w+ = )?class\b/, /\bfunction contentItemsToText\(/]) {
        expect(texts.filter((text) => definition.test(text)), `${definition} in dist/*${extension}`).toHaveLength(1);
      }
    }
  });

  it('ESM: an output made through one entry passes through the other unchanged', async () => {
    const root = await import(new URL('index.js', dist).href);
    const internal = await import(new URL('internal.js', dist).href);
    const failure = new internal.FailureToolOutput('no');
    expect(root.toToolOutput(failure)).toBe(failure);
    expect(root.toToolOutput({ a: 1 })).toBeInstanceOf(root.JsonToolOutput);
  });
});
