/**
 * Packs every published package and proves each one works alone: install the tarball into an empty
 * temporary project with npm (plus the tarballs of the Switchyard packages it depends on, which are
 * not on the registry), then import each of its entry points as ESM and as CJS (each exporting
 * exactly the values of the export snapshot, the root's `VERSION` equal to its package.json version),
 * type-check a file that imports every entry point (a vitest-only `./testing` entry too, which only
 * vitest can load), and run the package's own `pack-smoke.mjs` there when it has one (a check of the
 * built files in place).
 *
 * isolated-vm is a peer of @switchyard/code-mode-runtime; in these per-package projects the
 * workspace's copy (6.x) and its own dependencies are placed in the parent folder of all temporary
 * projects (Node resolves them by walking up), and npm runs with --legacy-peer-deps — so the check
 * proves that this copy satisfies every package's declared isolated-vm peer range. Other third-party
 * peers (e.g. `zod` for @switchyard/ai-sdk) are installed beside the tarballs, as npm would install them.
 *
 * Then the host shapes (src/host-shapes.ts): each shape's one install line, as an adopter runs it,
 * in an app of its own, and a turn of that shape. `--hosts` runs the host shapes alone (the Node 22
 * pass). A package whose `engines.node` excludes the running Node is reported as skipped, not failed.
 * Then a plugin built against the previous release in a host of these tarballs (src/previous-release.ts;
 * `--previous-release` runs it alone).
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import semver from 'semver';
import { HOST_SHAPES, closure, packAll, packages, root, type Pkg } from './packs.ts';
import { checkHostShape, run } from './host-shapes.ts';
import { buildPreviousReleasePlugin, checkPreviousReleasePlugin } from './previous-release.ts';

const require = createRequire(join(root, 'packages/code-mode-runtime/package.json'));
const tsc = join(root, 'node_modules/typescript/bin/tsc');

// `--hosts`: the host shapes alone (the Node 22 pass); `--previous-release`: the previous-release plugin alone;
// package names: those packages alone, no host shapes.
const USAGE = `usage: pnpm --filter @switchyard/check-packs run check [-- --hosts | --previous-release | <package name part>…]
  (nothing)           every package alone, the host shapes and the previous-release plugin
  --hosts             the host shapes alone
  --previous-release  the previous-release plugin alone
  <name part>…        the packages whose name contains one of them, alone (e.g. kit session)`;
const unknown = process.argv.slice(2).filter((arg) => arg.startsWith('-') && arg !== '--' && arg !== '--hosts' && arg !== '--previous-release');
if (unknown.length) {
  // `--help` or a misspelt flag must not start the whole run (tens of minutes of installs).
  console[unknown.includes('--help') ? 'log' : 'error'](`${unknown.includes('--help') ? '' : `check-packs: unknown option ${unknown.join(' ')}\n`}${USAGE}`);
  process.exit(unknown.includes('--help') ? 0 : 1);
}
const hostsOnly = process.argv.includes('--hosts');
const previousOnly = process.argv.includes('--previous-release');
const only = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const wanted = only.length ? packages.filter((p) => only.some((o) => p.name.includes(o))) : packages;
const runsHere = (pkg: Pkg) => !pkg.nodeRange || semver.satisfies(process.version, pkg.nodeRange);
for (const pkg of wanted.filter((p) => !runsHere(p))) {
  console.log(`check-packs: skip ${pkg.name} — needs Node ${pkg.nodeRange}, this is ${process.version} (the other matrix pass checks it)`);
}
const selected = hostsOnly || previousOnly ? [] : wanted.filter(runsHere);

const work = mkdtempSync(join(tmpdir(), 'switchyard-packs-'));
const tarballs = join(work, 'tarballs');
mkdirSync(tarballs);

// The shared native peer and its dependencies, resolved from the parent folder of every temporary project.
const ivmDir = dirname(realpathSync(require.resolve('isolated-vm/package.json')));
const ivmVersion = JSON.parse(readFileSync(join(ivmDir, 'package.json'), 'utf8')).version as string;
copyWithDependencies('isolated-vm', ivmDir, new Set());
for (const pkg of selected.filter((p) => p.ivmRange)) {
  if (!semver.satisfies(ivmVersion, pkg.ivmRange!)) {
    console.error(`check-packs: ${pkg.name} declares isolated-vm ${pkg.ivmRange}, but this Node (${process.version}) runs isolated-vm ${ivmVersion}`);
    process.exit(1);
  }
  console.log(`check-packs: ${pkg.name} peer isolated-vm ${pkg.ivmRange} — satisfied by ${ivmVersion} on Node ${process.version}`);
}

function copyWithDependencies(name: string, dir: string, seen: Set<string>) {
  if (seen.has(name)) return;
  seen.add(name);
  cpSync(dir, join(work, 'node_modules', name), { recursive: true, dereference: true });
  const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const local = createRequire(join(dir, 'package.json'));
  for (const dep of Object.keys(json.dependencies ?? {})) {
    copyWithDependencies(dep, dirname(realpathSync(local.resolve(`${dep}/package.json`))), seen);
  }
}

const tarballOf = packAll(tarballs);
// Built while the packages are checked (it needs none of the tarballs); installed after them.
const previousPlugin = only.length === 0 && !hostsOnly ? buildPreviousReleasePlugin() : undefined;

async function check(pkg: Pkg): Promise<string | undefined> {
  const dir = join(work, pkg.name.replace('@switchyard/', ''));
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '0.0.0', private: true }));
  const members = [...closure(pkg.name)];
  const installs = [...members.map((name) => tarballOf.get(name)!), ...new Set(members.flatMap((name) => packages.find((p) => p.name === name)?.externalPeers ?? []))];
  const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--legacy-peer-deps', '--ignore-scripts', ...installs, '@types/node@20.19.43'], dir);
  if (install.code !== 0) return `npm install failed:\n${install.output}`;
  const entries = await checkEntryPoints(pkg, dir);
  if (entries) return entries;
  if (pkg.name === '@switchyard/code-mode-runtime') {
    // The worker entry ships in the package: a cell must run in a worker process of the installed
    // copy, from the ESM and the CJS build (TypeScript stripping included: sucrase on its thread).
    const cell = (load: string) => `${load}
      const runtime = createCodeModeRuntime({ workers: { prewarm: false } });
      const session = runtime.openSession({ invokeTool: async () => 41, notify() {}, cellClosed() {} });
      session.createCell({ source: 'const n: number = await tools.t({}); text(n + 1)', tools: [{ name: 't', description: '', kind: 'function' }], yieldTimeMs: 60000 })
        .then(async ({ observation }) => {
          await runtime.shutdown();
          if (JSON.stringify(observation.items) !== '[{"type":"input_text","text":"42"}]') { console.error(JSON.stringify(observation)); process.exit(1); }
        }, (error) => { console.error(error); process.exit(1); });`;
    const esmCell = await run('node', ['--input-type=module', '-e', cell(`import { createCodeModeRuntime } from '${pkg.name}';`)], dir);
    if (esmCell.code !== 0) return `a cell in a worker process (ESM) failed:\n${esmCell.output}`;
    const cjsCell = await run('node', ['-e', cell(`const { createCodeModeRuntime } = require('${pkg.name}');`)], dir);
    if (cjsCell.code !== 0) return `a cell in a worker process (CJS) failed:\n${cjsCell.output}`;
  }
  // Every subpath's types as an importer meets them, from the tarball's .d.ts (and .d.cts where it has
  // a CJS build); a vitest-only entry too: npm installed vitest as the package's peer beside it.
  const subpaths = pkg.entries.filter((entry) => entry.specifier !== pkg.name);
  const uses = (cjs: boolean) =>
    subpaths
      .filter((entry) => !cjs || entry.require)
      .map(({ specifier }, i) => (cjs ? `import entry${i} = require('${specifier}');\n` : `import * as entry${i} from '${specifier}';\n`) + `export type Entry${i} = typeof entry${i};\n`)
      .join('');
  writeFileSync(join(dir, 'use.mts'), `import { VERSION } from '${pkg.name}';\nconst version: string = VERSION;\nexport { version };\n${uses(false)}`);
  writeFileSync(join(dir, 'use.cts'), `import pkg = require('${pkg.name}');\nconst version: string = pkg.VERSION;\nexport { version };\n${uses(true)}`);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['use.mts', 'use.cts'] }),
  );
  const types = await run('node', [tsc, '-p', 'tsconfig.json'], dir);
  if (types.code !== 0) return `type-check failed:\n${types.output}`;
  // A package may ship a smoke test of its installed build (not published): run it in the project.
  const smoke = join(pkg.dir, 'pack-smoke.mjs');
  if (existsSync(smoke)) {
    cpSync(smoke, join(dir, 'pack-smoke.mjs'));
    const ran = await run('node', ['--no-node-snapshot', 'pack-smoke.mjs'], dir);
    if (ran.code !== 0) return `pack-smoke.mjs failed:\n${ran.output}`;
    console.log(`check-packs: ${pkg.name} ${ran.output.trim()}`);
  }
  return undefined;
}

const snapshot = JSON.parse(readFileSync(join(root, 'tools/check-packs/exports.snapshot.json'), 'utf8')) as Record<string, { values: string[] }>;

/**
 * Every entry point of the installed package (`.` and each subpath of its `exports`) exports exactly
 * the values the snapshot records, as ESM and, where the entry has a `require` condition, as CJS:
 * a subpath resolves from the tarball, and no build drops or adds a name. The root's `VERSION` is the
 * tarball's package.json version (the release script keeps the two in step).
 */
async function checkEntryPoints(pkg: Pkg, dir: string): Promise<string | undefined> {
  for (const entry of pkg.entries) {
    // A vitest-only entry loads only inside a vitest run: the plugin example's test loads it there,
    // from the workspace (scripts/run-examples.mjs); its types are checked with the others.
    if (entry.vitestOnly) continue;
    const { specifier } = entry;
    const expected = JSON.stringify([...(snapshot[specifier]?.values ?? [])].sort());
    const version =
      specifier === pkg.name
        ? `if (m.VERSION !== ${JSON.stringify(pkg.version)}) { console.error('VERSION is ' + JSON.stringify(m.VERSION) + ', package.json says ${pkg.version}'); process.exit(1); } `
        : '';
    const print = `${version}console.log(JSON.stringify(Object.keys(m).filter((k) => k !== 'default' && k !== '__esModule').sort()))`;
    const loads = [['ESM', ['--input-type=module', '-e', `import * as m from '${specifier}'; ${print}`]] as const];
    // The root is required as CJS even without a `require` condition: every package promises both formats.
    const all = entry.require || specifier === pkg.name ? [...loads, ['CJS', ['-e', `const m = require('${specifier}'); ${print}`]] as const] : loads;
    for (const [format, args] of all) {
      const loaded = await run('node', ['--no-node-snapshot', ...args], dir);
      if (loaded.code !== 0) return `${specifier} (${format}) failed to load:\n${loaded.output}`;
      const names = loaded.output.trim().split('\n').at(-1);
      if (names !== expected) return `${specifier} (${format}) exports ${names}, the snapshot records ${expected}`;
    }
  }
  return undefined;
}

const failures: string[] = [];
const queue = [...selected];
async function worker() {
  for (let pkg = queue.shift(); pkg; pkg = queue.shift()) {
    const started = Date.now();
    const problem = await check(pkg);
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    if (problem) {
      failures.push(`${pkg.name}: ${problem}`);
      console.log(`check-packs: FAIL ${pkg.name} (${secs}s)`);
    } else {
      console.log(`check-packs: ok   ${pkg.name} — installed alone, imported as ESM and CJS, type-checked (${secs}s)`);
    }
  }
}
/** Whether every package a shape's install line brings satisfies `engines.node` for `version`. */
function shapeRunsOn(shape: (typeof HOST_SHAPES)[number], version: string): boolean {
  const members = new Set<string>();
  for (const name of shape.packages) closure(name, members, (pkg) => pkg.requiredDeps);
  return [...members].every((name) => {
    const range = packages.find((p) => p.name === name)?.nodeRange;
    return !range || semver.satisfies(version, range);
  });
}

/**
 * Every host shape on this Node, one after another; then, when SWITCHYARD_MACHINE_NODE names an older
 * Node (the machine's own, set by scripts/setup.mjs), the shapes that declare it run there too, and
 * every package that declares it is installed there and imported — the proof behind `>=20`.
 */
async function checkHostShapes(): Promise<string[]> {
  const problems: string[] = [];
  const nodes: Array<string | undefined> = [undefined];
  const machineNode = process.env.SWITCHYARD_MACHINE_NODE;
  if (hostsOnly && machineNode && existsSync(machineNode)) nodes.push(dirname(machineNode));
  for (const nodeBin of nodes) {
    const version = (await run('node', ['--version'], root, nodeBin)).output.trim();
    for (const shape of HOST_SHAPES) {
      if (!shapeRunsOn(shape, version)) {
        console.log(`check-packs: host ${shape.name} not on Node ${version} — it needs Node 22+`);
        continue;
      }
      const started = Date.now();
      const { problem, note } = await checkHostShape(shape, tarballOf, nodeBin);
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      if (problem) problems.push(`host ${shape.name}: ${problem}`);
      console.log(problem ? `check-packs: FAIL host ${shape.name} on Node ${version} (${secs}s)` : `check-packs: ok   host ${shape.name} — ${note} (${secs}s)`);
    }
    if (nodeBin) {
      const problem = await checkOldNodePackages(nodeBin, version);
      if (problem) problems.push(problem);
    }
  }
  return problems;
}

/** Installs every package whose `engines.node` admits `version` on that Node and imports each one. */
async function checkOldNodePackages(nodeBin: string, version: string): Promise<string | undefined> {
  const names = packages.filter((pkg) => !pkg.nodeRange || semver.satisfies(version, pkg.nodeRange)).map((pkg) => pkg.name);
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-old-node-'));
  try {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'old-node', version: '0.0.0', private: true, type: 'module' }));
    const peers = [...new Set(names.flatMap((name) => packages.find((p) => p.name === name)!.externalPeers))];
    const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...names.map((name) => tarballOf.get(name)!), ...peers], dir, nodeBin);
    if (install.code !== 0) return `Node ${version}: npm install of the packages that declare it failed:\n${install.output}`;
    const source = names.map((name, i) => `import * as m${i} from '${name}'; if (typeof m${i}.VERSION !== 'string') throw new Error('${name}: no VERSION');`).join('\n');
    const imported = await run('node', ['--input-type=module', '-e', source], dir, nodeBin);
    if (imported.code !== 0) return `Node ${version}: importing the packages that declare it failed:\n${imported.output}`;
    console.log(`check-packs: ok   Node ${version} — installed and imported every package that declares it: ${names.map((n) => n.replace('@switchyard/', '')).join(', ')}`);
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await Promise.all([worker(), worker(), worker()]);
if (only.length === 0 && !previousOnly) failures.push(...(await checkHostShapes()));
if (previousPlugin) {
  const { problem, note } = await checkPreviousReleasePlugin(await previousPlugin, tarballOf);
  if (problem) failures.push(`previous release: ${problem}`);
  console.log(problem ? 'check-packs: FAIL previous release' : `check-packs: ok   previous release — ${note}`);
}
rmSync(work, { recursive: true, force: true });
if (failures.length) {
  console.error(failures.join('\n\n'));
  console.log(`check-packs: ${failures.length} failed`);
  process.exit(1);
}
console.log(`check-packs: ${selected.length} packages${only.length === 0 && !previousOnly ? ' and the host shapes' : ''} passed`);
