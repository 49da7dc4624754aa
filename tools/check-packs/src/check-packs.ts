/**
 * Packs every published package and proves each one works alone: install the tarball into an empty
 * temporary project with npm (plus the tarballs of the Switchyard packages it depends on, which are
 * not on the registry), then import it as ESM and as CJS, type-check a file that uses it, and run
 * the package's own `pack-smoke.mjs` there when it has one (a check of the built files in place).
 *
 * isolated-vm is a peer of @switchyard/code-mode-runtime and takes ~45 s to compile; instead of
 * compiling it once per project, the workspace's built copy (5.x on Node 20, 6.x in the Node 24
 * pass) and its own dependencies are placed in the parent folder of all temporary projects (Node
 * resolves them by walking up), and npm runs with --legacy-peer-deps — so the check proves instead
 * that this copy satisfies every package's declared isolated-vm peer range. Other third-party peers
 * (e.g. `zod` for @switchyard/ai-sdk) are installed beside the tarballs, as npm would install them.
 *
 * A package whose `engines.node` excludes the running Node is reported as skipped, not failed: the
 * matrix's other pass checks it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import semver from 'semver';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const require = createRequire(join(root, 'packages/code-mode-runtime/package.json'));
const tsc = join(root, 'node_modules/typescript/bin/tsc');

interface Pkg {
  name: string;
  dir: string;
  internalDeps: string[];
  /** Switchyard packages in `dependencies` alone (what npm installs without optional peers). */
  requiredDeps: string[];
  /** The declared isolated-vm peer range, if any. */
  ivmRange?: string;
  /** `engines.node`, if any. */
  nodeRange?: string;
  /** Third-party peers other than isolated-vm, as `name@range` (installed with the package, as npm would). */
  externalPeers: string[];
}

const packages: Pkg[] = readdirSync(join(root, 'packages'))
  .map((folder) => join(root, 'packages', folder))
  .filter((dir) => existsSync(join(dir, 'package.json')))
  .map((dir) => {
    const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const deps = { ...json.dependencies, ...json.peerDependencies };
    return {
      name: json.name as string,
      dir,
      internalDeps: Object.keys(deps).filter((d) => d.startsWith('@switchyard/')),
      requiredDeps: Object.keys(json.dependencies ?? {}).filter((d) => d.startsWith('@switchyard/')),
      ivmRange: json.peerDependencies?.['isolated-vm'] as string | undefined,
      externalPeers: Object.entries((json.peerDependencies ?? {}) as Record<string, string>)
        .filter(([name]) => name !== 'isolated-vm' && !name.startsWith('@switchyard/'))
        .map(([name, range]) => `${name}@${range}`),
      nodeRange: json.engines?.node as string | undefined,
      private: json.private,
    };
  })
  .filter((pkg) => !(pkg as { private?: boolean }).private);

const only = process.argv.slice(2);
const wanted = only.length ? packages.filter((p) => only.some((o) => p.name.includes(o))) : packages;
const runsHere = (pkg: Pkg) => !pkg.nodeRange || semver.satisfies(process.version, pkg.nodeRange);
for (const pkg of wanted.filter((p) => !runsHere(p))) {
  console.log(`check-packs: skip ${pkg.name} — needs Node ${pkg.nodeRange}, this is ${process.version} (the other matrix pass checks it)`);
}
const selected = wanted.filter(runsHere);

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

const tarballOf = new Map<string, string>();
for (const pkg of packages) {
  const out = execFileSync('pnpm', ['pack', '--pack-destination', tarballs], { cwd: pkg.dir, encoding: 'utf8' });
  const file = out.trim().split('\n').pop()!.trim();
  tarballOf.set(pkg.name, file.startsWith('/') ? file : join(tarballs, file));
}

function closure(name: string, seen = new Set<string>(), edges: (pkg: Pkg) => string[] = (pkg) => pkg.internalDeps): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  const pkg = packages.find((p) => p.name === name);
  for (const dep of pkg ? edges(pkg) : []) closure(dep, seen, edges);
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
  const members = [...closure(pkg.name)];
  const installs = [...members.map((name) => tarballOf.get(name)!), ...new Set(members.flatMap((name) => packages.find((p) => p.name === name)?.externalPeers ?? []))];
  const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--legacy-peer-deps', '--ignore-scripts', ...installs, '@types/node@20.19.43'], dir);
  if (install.code !== 0) return `npm install failed:\n${install.output}`;
  const esm = await run('node', ['--no-node-snapshot', '--input-type=module', '-e', `import * as m from '${pkg.name}'; if (typeof m.VERSION !== 'string') { console.error('no VERSION export'); process.exit(1); }`], dir);
  if (esm.code !== 0) return `ESM import failed:\n${esm.output}`;
  const cjs = await run('node', ['--no-node-snapshot', '-e', `const m = require('${pkg.name}'); if (typeof m.VERSION !== 'string') { console.error('no VERSION export'); process.exit(1); }`], dir);
  if (cjs.code !== 0) return `CJS require failed:\n${cjs.output}`;
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
  writeFileSync(join(dir, 'use.mts'), `import { VERSION } from '${pkg.name}';\nconst version: string = VERSION;\nexport { version };\n`);
  writeFileSync(join(dir, 'use.cts'), `import pkg = require('${pkg.name}');\nconst version: string = pkg.VERSION;\nexport { version };\n`);
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
/** Files below `dir` whose name ends in `.node` (compiled native modules), as paths relative to it. */
function nativeModules(dir: string, base = dir): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...nativeModules(path, base));
    else if (entry.name.endsWith('.node')) found.push(path.slice(base.length + 1));
  }
  return found;
}

/**
 * A direct-mode host's install, as a new host author runs it: `npm install @switchyard/session
 * @switchyard/tool-clock` (the tarballs, and those of the Switchyard packages they depend on) in an
 * empty project outside the shared isolated-vm folder, with install scripts on and peers resolved
 * as npm does. No native module may be built or installed, and a direct-mode turn must run; a
 * code-mode session must say which packages to install.
 */
async function checkDirectHost(): Promise<string | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-direct-host-'));
  try {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'direct-host', version: '0.0.0', private: true, type: 'module' }));
    const members = new Set<string>();
    for (const name of ['@switchyard/session', '@switchyard/tool-clock']) closure(name, members, (pkg) => pkg.requiredDeps);
    const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...[...members].map((name) => tarballOf.get(name)!)], dir);
    if (install.code !== 0) return `npm install failed:\n${install.output}`;
    const native = nativeModules(join(dir, 'node_modules'));
    if (native.length > 0) return `native modules installed: ${native.join(', ')}`;
    for (const absent of ['isolated-vm', '@switchyard/code-mode-runtime']) {
      if (existsSync(join(dir, 'node_modules', absent))) return `${absent} was installed`;
    }
    writeFileSync(
      join(dir, 'turn.mjs'),
      [
        `import { createSession } from '@switchyard/session';`,
        `import { createScriptedModel } from '@switchyard/session/testing';`,
        `import { clockTool } from '@switchyard/tool-clock';`,
        `import { fixedTimeProvider } from '@switchyard/protocol';`,
        `const session = createSession({ toolMode: 'direct', tools: [clockTool()], time: fixedTimeProvider('2026-12-01T15:00:00Z') });`,
        `const model = createScriptedModel([[{ type: 'function_call', call_id: 'c1', namespace: 'clock', name: 'curr_time', arguments: '{}' }], [{ type: 'message', role: 'assistant', content: 'done' }]]);`,
        `const result = await session.runTurn({ model, input: 'What time is it?' });`,
        `const output = result.items.find((item) => item.type === 'function_call_output');`,
        `if (result.finalText !== 'done' || !output || !String(output.output).includes('2026')) { console.error(JSON.stringify(result.items)); process.exit(1); }`,
        `const codeMode = createSession({ toolMode: 'code-mode-only', tools: [clockTool()] });`,
        `const error = await codeMode.runTurn({ model: createScriptedModel([[]]), input: 'x' }).then(() => undefined, (caught) => caught);`,
        `if (error?.code !== 'CONFIG' || !error.message.includes('npm install @switchyard/code-mode-runtime isolated-vm')) { console.error('code mode without the runtime:', error); process.exit(1); }`,
        `console.log('direct turn ran:', output.output);`,
      ].join('\n'),
    );
    // the project's own @switchyard/protocol: a host imports the helpers it needs from it
    const ran = await run('node', ['turn.mjs'], dir);
    if (ran.code !== 0) return `direct-mode turn failed:\n${ran.output}`;
    const typed = await typeCheckHostApp(dir);
    if (typed) return typed;
    console.log(`check-packs: direct host (session + tool-clock, npm install with scripts): no native module, ${ran.output.trim()}`);
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The host's own TypeScript, checked as a strict project checks it (`skipLibCheck: false`) against
 * the installed declaration files, without the optional peers (no `@opentelemetry/api`): a tool
 * whose result is typed by an `interface`, a session with a tracer option's type in scope.
 */
async function typeCheckHostApp(dir: string): Promise<string | undefined> {
  const types = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-save', '@types/node@20.19.43'], dir);
  if (types.code !== 0) return `npm install @types/node failed:\n${types.output}`;
  if (existsSync(join(dir, 'node_modules', '@opentelemetry', 'api'))) return 'the optional peer @opentelemetry/api was installed: the check would prove nothing';
  writeFileSync(
    join(dir, 'app.ts'),
    [
      `import { createSession, type SessionOptions } from '@switchyard/session';`,
      `import { defineFunctionTool, JsonToolOutput } from '@switchyard/kit';`,
      `interface Forecast { city: string; tempC: number; hourly: Array<{ hour: number; tempC: number }> }`,
      `const forecast = defineFunctionTool<{ city: string }>({`,
      `  name: 'forecast', description: 'Forecast.', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },`,
      `  handle: async ({ args }): Promise<Forecast> => ({ city: args.city, tempC: 3, hourly: [] }),`,
      `});`,
      `const direct: Forecast = { city: 'Oslo', tempC: 1, hourly: [] };`,
      `export const output = new JsonToolOutput(direct);`,
      `const options: SessionOptions = { toolMode: 'direct', tools: [forecast] };`,
      `export const session = createSession(options);`,
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['app.ts'] }),
  );
  const checked = await run('node', [tsc, '-p', 'tsconfig.json'], dir);
  if (checked.code !== 0) return `the host's TypeScript (skipLibCheck: false, no optional peers) failed to type-check:\n${checked.output}`;
  console.log('check-packs: direct host app type-checks with skipLibCheck: false and no @opentelemetry/api (interface-typed tool result)');
  return undefined;
}

await Promise.all([worker(), worker(), worker()]);
if (selected.some((pkg) => pkg.name === '@switchyard/session')) {
  const problem = await checkDirectHost();
  if (problem) failures.push(`direct host: ${problem}`);
}
rmSync(work, { recursive: true, force: true });
if (failures.length) {
  console.error(failures.join('\n\n'));
  console.log(`check-packs: ${selected.length - failures.length} passed, ${failures.length} failed`);
  process.exit(1);
}
console.log(`check-packs: ${selected.length} passed, 0 failed`);
