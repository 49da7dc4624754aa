/**
 * Packs every published package and proves each one works alone: install the tarball into an empty
 * temporary project with npm (plus the tarballs of the Switchyard packages it depends on, which are
 * not on the registry), then import it as ESM and as CJS and type-check a file that uses it.
 *
 * isolated-vm is a peer of @switchyard/code-mode-runtime and takes ~45 s to compile; instead of
 * compiling it once per project, the workspace's built copy is placed in the parent folder of all
 * temporary projects (Node resolves it by walking up), and npm runs with --legacy-peer-deps.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const require = createRequire(join(root, 'packages/code-mode-runtime/package.json'));
const tsc = join(root, 'node_modules/typescript/bin/tsc');

interface Pkg {
  name: string;
  dir: string;
  internalDeps: string[];
}

const packages: Pkg[] = readdirSync(join(root, 'packages'))
  .map((folder) => join(root, 'packages', folder))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => {
    const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const deps = { ...json.dependencies, ...json.peerDependencies };
    return { name: json.name as string, dir, internalDeps: Object.keys(deps).filter((d) => d.startsWith('@switchyard/')), private: json.private };
  })
  .filter((pkg) => !(pkg as { private?: boolean }).private);

const only = process.argv.slice(2);
const selected = only.length ? packages.filter((p) => only.some((o) => p.name.includes(o))) : packages;

const work = mkdtempSync(join(tmpdir(), 'switchyard-packs-'));
const tarballs = join(work, 'tarballs');
mkdirSync(tarballs);

// The shared native peer, resolved from the parent folder of every temporary project.
const ivmDir = dirname(realpathSync(require.resolve('isolated-vm/package.json')));
cpSync(ivmDir, join(work, 'node_modules/isolated-vm'), { recursive: true, dereference: true });

const tarballOf = new Map<string, string>();
for (const pkg of packages) {
  const out = execFileSync('pnpm', ['pack', '--pack-destination', tarballs], { cwd: pkg.dir, encoding: 'utf8' });
  const file = out.trim().split('\n').pop()!.trim();
  tarballOf.set(pkg.name, file.startsWith('/') ? file : join(tarballs, file));
}

function closure(name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  for (const dep of packages.find((p) => p.name === name)?.internalDeps ?? []) closure(dep, seen);
  return seen;
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, npm_config_loglevel: 'error' } });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code) => resolvePromise({ code: code ?? 1, output }));
  });
}

async function check(pkg: Pkg): Promise<string | undefined> {
  const dir = join(work, pkg.name.replace('@switchyard/', ''));
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '0.0.0', private: true }));
  const installs = [...closure(pkg.name)].map((name) => tarballOf.get(name)!);
  const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--legacy-peer-deps', '--ignore-scripts', ...installs, '@types/node@20.19.43'], dir);
  if (install.code !== 0) return `npm install failed:\n${install.output}`;
  const esm = await run('node', ['--no-node-snapshot', '--input-type=module', '-e', `import * as m from '${pkg.name}'; if (typeof m.VERSION !== 'string') { console.error('no VERSION export'); process.exit(1); }`], dir);
  if (esm.code !== 0) return `ESM import failed:\n${esm.output}`;
  const cjs = await run('node', ['--no-node-snapshot', '-e', `const m = require('${pkg.name}'); if (typeof m.VERSION !== 'string') { console.error('no VERSION export'); process.exit(1); }`], dir);
  if (cjs.code !== 0) return `CJS require failed:\n${cjs.output}`;
  writeFileSync(join(dir, 'use.mts'), `import { VERSION } from '${pkg.name}';\nconst version: string = VERSION;\nexport { version };\n`);
  writeFileSync(join(dir, 'use.cts'), `import pkg = require('${pkg.name}');\nconst version: string = pkg.VERSION;\nexport { version };\n`);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['use.mts', 'use.cts'] }),
  );
  const types = await run('node', [tsc, '-p', 'tsconfig.json'], dir);
  if (types.code !== 0) return `type-check failed:\n${types.output}`;
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
await Promise.all([worker(), worker(), worker()]);
rmSync(work, { recursive: true, force: true });
if (failures.length) {
  console.error(failures.join('\n\n'));
  console.log(`check-packs: ${selected.length - failures.length} passed, ${failures.length} failed`);
  process.exit(1);
}
console.log(`check-packs: ${selected.length} passed, 0 failed`);
