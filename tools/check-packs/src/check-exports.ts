/**
 * Holds every published package's public surface to three things that must agree:
 *   1. `exports.snapshot.json` beside this folder: each entry point's export names, values and types;
 *   2. the root README's generated table of public names (between the `public-api` markers);
 *   3. each package README's `## API` table: every exported name documented, nothing else
 *      (an `…/internal` entry point, for Switchyard's own packages, is in 1 only);
 * and holds each package's root entry to `MAX_ROOT_VALUES` values (`@switchyard/protocol` aside).
 * `--update` rewrites 1 and 2 from the sources (3 is written by hand: it says what each name is for).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { entryPoints, oversizedRoots, readSurface, readmeProblems, replaceSurfaceTable, surfaceDiff, type Surface } from './export-surface';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const snapshotPath = join(root, 'tools/check-packs/exports.snapshot.json');
const readmePath = join(root, 'README.md');
const UPDATE = 'pnpm run exports:update';

const entries = entryPoints(root);
const surface = readSurface(root, entries);
const rootReadme = readFileSync(readmePath, 'utf8');
const regenerated = replaceSurfaceTable(rootReadme, surface);
if (regenerated === undefined) {
  console.error('check-exports: README.md has no public-api markers; put the two marker lines back where the table of public names goes');
  process.exit(1);
}

if (process.argv.includes('--update')) {
  writeFileSync(snapshotPath, `${JSON.stringify(surface, null, 2)}\n`);
  writeFileSync(readmePath, regenerated);
  console.log(`check-exports: wrote tools/check-packs/exports.snapshot.json and the README table (${entries.length} entry points)`);
  process.exit(0);
}

const problems: string[] = [];
let committed: Surface = {};
try {
  committed = JSON.parse(readFileSync(snapshotPath, 'utf8'));
} catch {
  problems.push('tools/check-packs/exports.snapshot.json is missing or not JSON');
}
const diff = surfaceDiff(committed, surface);
if (diff.length) {
  problems.push(
    [
      'the public exports differ from tools/check-packs/exports.snapshot.json (+ exported now, - in the snapshot only):',
      ...diff.map((line) => `  ${line}`),
      `If the change is meant: run \`${UPDATE}\`, document each added name in its package README's "## API" table,`,
      'and add a changeset (a removed export in a 0.x package is a minor: say what to use instead).',
    ].join('\n'),
  );
} else if (regenerated !== rootReadme) {
  problems.push(`the table of public names in README.md is stale: run \`${UPDATE}\``);
}
problems.push(...oversizedRoots(surface));
const seen = new Set<string>();
for (const entry of entries) {
  if (seen.has(entry.dir)) continue;
  seen.add(entry.dir);
  const name = JSON.parse(readFileSync(join(entry.dir, 'package.json'), 'utf8')).name as string;
  const readme = readFileSync(join(entry.dir, 'README.md'), 'utf8');
  const wrong = readmeProblems(readme, name, surface);
  if (wrong.length) problems.push([`${name} README.md ("## API" table):`, ...wrong.map((line) => `  ${line}`)].join('\n'));
}

if (problems.length) {
  console.error(problems.map((problem) => `check-exports: ${problem}`).join('\n\n'));
  process.exit(1);
}
const names = Object.values(surface).reduce((sum, { values, types }) => sum + values.length + types.length, 0);
console.log(`check-exports: ${entries.length} entry points, ${names} names — snapshot, root README table and package API tables agree`);
