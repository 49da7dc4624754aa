import { readdirSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { unmetNodeRange } from './scripts/engines.mjs';

// Every package and tool with a vitest config, except those whose engines.node excludes this Node
// (a contributor running vitest directly on an older Node; `npm test` runs on Node 22+).
// Example plugin packages (`examples/<example>/<name>-plugin`) are projects too: each carries the
// test a plugin author copies.
const examplePlugins = readdirSync('examples')
  .map((name) => join('examples', name))
  .filter((dir) => statSync(dir).isDirectory())
  .flatMap((dir) => readdirSync(dir).filter((name) => name.endsWith('-plugin')).map((name) => join(dir, name)));

const projects = [...['internal', 'packages', 'tools'].flatMap((group) => readdirSync(group).map((name) => join(group, name))), ...examplePlugins]
  .filter((dir) => existsSync(join(dir, 'vitest.config.ts')))
  .filter((dir) => {
    const range = unmetNodeRange(dir);
    if (range) console.log(`vitest: project ${dir} not loaded — needs Node ${range}, this is ${process.version}`);
    return !range;
  })
  // `vitest.<variant>.config.ts` beside it runs the package's tests a second time (e.g. code-mode-runtime in process)
  .flatMap((dir) => readdirSync(dir).filter((file) => /^vitest(\.[\w-]+)?\.config\.ts$/.test(file)).map((file) => join(dir, file)));

export default defineConfig({
  test: {
    projects,
    pool: 'forks',
    execArgv: ['--no-node-snapshot'],
    maxWorkers: 2,
  },
});
