import { readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Bench, BenchFigure } from './harness';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const benchFiles = readdirSync(join(here, 'benches'));
const exact = (name: string) => benchFiles.includes(`${name}.ts`);
const files = benchFiles
  .filter((file) => file.endsWith('.ts'))
  // A name that is a bench's own (`runtime` → runtime.ts) selects that bench alone; any other selects every bench whose file contains it.
  .filter((file) => only.length === 0 || only.some((name) => (exact(name) ? file === `${name}.ts` : file.includes(name))))
  .sort();

const fmt = (n: number | undefined) => (n === undefined ? '' : n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(2) : n.toPrecision(3));
const results: Array<{ bench: string; figures: BenchFigure[] }> = [];
const lines = ['| bench | figure | value | reference | ratio | note |', '|---|---|---|---|---|---|'];
for (const file of files) {
  const module = (await import(pathToFileURL(join(here, 'benches', file)).href)) as { default: Bench };
  const bench = module.default;
  process.stderr.write(`bench: ${bench.name} …\n`);
  const figures = await bench.run();
  results.push({ bench: bench.name, figures });
  for (const f of figures) {
    const ref = f.reference ? `${fmt(f.reference.value)} ${f.unit} (${f.reference.name})` : '';
    lines.push(`| ${bench.name} | ${f.name} | ${fmt(f.value)} ${f.unit} | ${ref} | ${f.ratio === undefined ? '' : `${fmt(f.ratio)}×`} | ${f.note ?? ''} |`);
  }
}
console.log(lines.join('\n'));
const out = join(here, '..', 'results');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'latest.json'), JSON.stringify({ date: new Date().toISOString(), node: process.version, results }, null, 2));
console.log(`\nwrote ${join(out, 'latest.json')}`);
