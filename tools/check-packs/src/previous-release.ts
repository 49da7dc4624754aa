/**
 * The compatibility promise, proven: a plugin built against the previous release installs into a
 * host of this tree's tarballs and runs. "The previous release" is the commit named in
 * `previous-release.json`; its `@switchyard/protocol` and `@switchyard/kit` are taken from git
 * (`git archive`) and built with their own build config in a temporary folder, the plugin template
 * (`examples/plugin-executor/weather-plugin`, as this tree has it) is built against them there and
 * packed, and the tarball is installed with npm (peer ranges enforced) beside the direct host shape's
 * tarballs. The host then registers the plugin's tool (a session), runs one call and prints what it
 * got; the check compares that line exactly, and type-checks the host's use of the plugin's
 * declaration files (`skipLibCheck: false`).
 *
 * npm shares one protocol and one kit between the host and the plugin when the plugin's ranges admit
 * the host's (asserted: no copy nested under the plugin); what was built against the previous
 * release is the plugin's own code, its declaration files and its declared ranges.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import semver from 'semver';
import { run } from './host-shapes.ts';
import { HOST_SHAPES, installArgs, root } from './packs.ts';

const PLUGIN_DIR = join(root, 'examples/plugin-executor/weather-plugin');
const PLUGIN_NAME = '@switchyard/example-weather-plugin';
/** What the previous release's packages are built with: their own config, this tree's pinned tools. */
const ARCHIVED = ['tsconfig.base.json', 'internal/config', 'packages/protocol', 'packages/kit'];
const TOOLS = ['tsup', 'typescript', '@types/node'];

interface PreviousRelease {
  commit: string;
  name: string;
}

/** The plugin built against the previous release, or why it could not be built. */
export interface PreviousPlugin {
  commit: string;
  protocol: string;
  kit: string;
  tarball?: string;
  problem?: string;
  buildSecs: number;
  dir: string;
}

const versionOf = (dir: string): string => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;

/** `workspace:` ranges as the packed package.json has them (`^x.y.z` / `x.y.z`), against the given versions. */
function publishedRanges(ranges: Record<string, string> | undefined, versions: Record<string, string>): Record<string, string> | undefined {
  if (!ranges) return undefined;
  return Object.fromEntries(
    Object.entries(ranges).map(([name, range]) => {
      if (!range.startsWith('workspace:')) return [name, range];
      const version = versions[name];
      if (!version) throw new Error(`${PLUGIN_NAME} depends on ${name}, which the previous release does not build`);
      return [name, range === 'workspace:*' ? version : `${range.slice('workspace:'.length)}${version}`];
    }),
  );
}

/**
 * Builds the previous release's protocol and kit, then the plugin template against them, and packs
 * the plugin. Never rejects (it runs beside the package checks): a failure is the result's `problem`.
 */
export async function buildPreviousReleasePlugin(): Promise<PreviousPlugin> {
  const started = Date.now();
  const release = JSON.parse(readFileSync(join(root, 'tools/check-packs/previous-release.json'), 'utf8')) as PreviousRelease;
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-previous-release-'));
  const result: PreviousPlugin = { commit: release.commit, protocol: '?', kit: '?', buildSecs: 0, dir };
  const fail = (problem: string): PreviousPlugin => ({ ...result, problem, buildSecs: (Date.now() - started) / 1000 });
  try {
    return await buildIn(dir, release, result, fail, started);
  } catch (error) {
    return fail(`building the previous release failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function buildIn(dir: string, release: PreviousRelease, result: PreviousPlugin, fail: (problem: string) => PreviousPlugin, started: number): Promise<PreviousPlugin> {

  const known = await run('git', ['-C', root, 'cat-file', '-e', `${release.commit}^{commit}`], root);
  if (known.code !== 0) return fail(`commit ${release.commit} (previous-release.json) is not in this clone: fetch it (git fetch origin ${release.commit}) or clone with full history`);
  const archive = await run('git', ['-C', root, 'archive', '-o', join(dir, 'previous.tar'), release.commit, ...ARCHIVED], root);
  if (archive.code !== 0) return fail(`git archive ${release.commit} failed:\n${archive.output}`);
  const untar = await run('tar', ['-xf', 'previous.tar'], dir);
  if (untar.code !== 0) return fail(`tar failed:\n${untar.output}`);
  result.protocol = versionOf(join(dir, 'packages/protocol'));
  result.kit = versionOf(join(dir, 'packages/kit'));

  // Resolution by walking up: the packages find each other, their config and the build tools here.
  mkdirSync(join(dir, 'node_modules/@switchyard'), { recursive: true });
  mkdirSync(join(dir, 'node_modules/@types'), { recursive: true });
  symlinkSync(join(dir, 'packages/protocol'), join(dir, 'node_modules/@switchyard/protocol'), 'dir');
  symlinkSync(join(dir, 'packages/kit'), join(dir, 'node_modules/@switchyard/kit'), 'dir');
  symlinkSync(join(dir, 'internal/config'), join(dir, 'node_modules/@switchyard/config'), 'dir');
  for (const tool of TOOLS) symlinkSync(join(root, 'node_modules', tool), join(dir, 'node_modules', tool), 'dir');

  const tsup = join(root, 'node_modules/tsup/dist/cli-default.js');
  for (const pkg of ['protocol', 'kit']) {
    const built = await run('node', [tsup, '--silent'], join(dir, 'packages', pkg));
    if (built.code !== 0) return fail(`building @switchyard/${pkg} of ${release.commit} failed:\n${built.output}`);
  }

  // The template as this tree has it, its workspace ranges written as pnpm publishes them.
  const plugin = join(dir, 'plugin');
  mkdirSync(join(plugin, 'src'), { recursive: true });
  for (const file of ['tsup.config.ts', 'tsconfig.json']) cpSync(join(PLUGIN_DIR, file), join(plugin, file));
  for (const file of readdirSync(join(PLUGIN_DIR, 'src')).filter((name) => !name.includes('.test.'))) cpSync(join(PLUGIN_DIR, 'src', file), join(plugin, 'src', file));
  const json = JSON.parse(readFileSync(join(PLUGIN_DIR, 'package.json'), 'utf8'));
  const versions = { '@switchyard/protocol': result.protocol, '@switchyard/kit': result.kit };
  const packed = { ...json, dependencies: publishedRanges(json.dependencies, versions), peerDependencies: publishedRanges(json.peerDependencies, versions), devDependencies: undefined };
  writeFileSync(join(plugin, 'package.json'), JSON.stringify(packed, null, 2));
  const build = await run('node', [tsup, '--silent'], plugin);
  if (build.code !== 0) return fail(`building ${PLUGIN_NAME} against @switchyard/kit ${result.kit} failed:\n${build.output}`);
  const pack = await run('npm', ['pack', '--pack-destination', dir], plugin);
  const tarball = join(dir, pack.output.trim().split('\n').pop()!.trim());
  if (pack.code !== 0 || !existsSync(tarball)) return fail(`npm pack of ${PLUGIN_NAME} failed:\n${pack.output}`);
  return { ...result, tarball, buildSecs: (Date.now() - started) / 1000 };
}

/** The host's app: registers the plugin's tool, runs one call, prints one JSON line. */
const HOST_APP = `import { createRequire } from 'node:module';
import { VERSION } from '@switchyard/protocol';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { weather } from '${PLUGIN_NAME}';
const cjs = createRequire(import.meta.url)('${PLUGIN_NAME}');
const session = createSession({ toolMode: 'direct', tools: [weather] });
const model = createScriptedModel([
  [{ type: 'function_call', call_id: 'call-oslo', namespace: 'weather__', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
  [{ type: 'message', role: 'assistant', content: 'done' }],
]);
const result = await session.runTurn({ model, input: 'Weather in Oslo?' });
await session.shutdown();
const outputs = result.items.filter((item) => item.type === 'function_call_output');
console.log(JSON.stringify({ host: VERSION, stamped: weather.protocolVersion, cjs: cjs.weather.spec.name, outputs, finalText: result.finalText }));
`;

/** The host's TypeScript using the plugin's declaration files, as ESM and as CJS. */
const HOST_TYPES = {
  'use.mts': `import type { ToolExecutor } from '@switchyard/protocol';
import { createSession, type SessionOptions } from '@switchyard/session';
import { weather, weatherTool, type WeatherReading } from '${PLUGIN_NAME}';
const reading: WeatherReading = { city: 'Oslo', tempC: -3, conditions: 'light snow' };
const options: SessionOptions = { toolMode: 'direct', tools: [weatherTool({ read: async (city) => (city === 'Oslo' ? reading : undefined) })] };
export const session = createSession(options);
export const executor: ToolExecutor = weather;
`,
  'use.cts': `import plugin = require('${PLUGIN_NAME}');
import type { ToolExecutor } from '@switchyard/protocol';
export const executor: ToolExecutor = plugin.weather;
`,
  'tsconfig.json': JSON.stringify({
    compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] },
    files: ['use.mts', 'use.cts'],
  }),
};

/**
 * Installs the plugin built against the previous release into a fresh host of this tree's tarballs
 * (the direct host shape's line), runs a call there and type-checks the host's use of it. Answers a
 * problem naming both releases' protocol and kit versions, or a one-line note.
 */
export async function checkPreviousReleasePlugin(previous: PreviousPlugin, tarballOf: Map<string, string>): Promise<{ problem?: string; note?: string }> {
  const current = { protocol: versionOf(join(root, 'packages/protocol')), kit: versionOf(join(root, 'packages/kit')) };
  const both =
    `a plugin built against the previous release (@switchyard/protocol ${previous.protocol}, @switchyard/kit ${previous.kit}; commit ${previous.commit.slice(0, 10)}) ` +
    `in a host of this tree (@switchyard/protocol ${current.protocol}, @switchyard/kit ${current.kit})`;
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-previous-plugin-host-'));
  try {
    if (previous.problem || !previous.tarball) return { problem: `${both}: ${previous.problem}` };
    const started = Date.now();
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'plugin-host', version: '0.0.0', private: true, type: 'module' }));
    const direct = HOST_SHAPES.find((shape) => shape.name === 'direct')!;
    const major = Number(process.versions.node.split('.')[0]);
    const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...installArgs(direct, tarballOf, major), previous.tarball, '@types/node@20.19.43'], dir);
    // Another contract line (a 0.x minor, a major): the plugin's peer range excludes the host's
    // protocol, and npm must refuse the install, naming the range and the version it found.
    if (!semver.satisfies(current.protocol, `^${previous.protocol}`)) {
      const refused = install.code !== 0 && install.output.includes(`@switchyard/protocol@"^${previous.protocol}"`) && install.output.includes(current.protocol);
      return refused ? { note: `${both}: refused by npm's peer check, as the contract lines differ` } : { problem: `${both}: the contract lines differ, and npm did not refuse the plugin's peer range:\n${install.output}` };
    }
    if (install.code !== 0) return { problem: `${both}: npm install failed:\n${install.output}` };
    for (const nested of ['protocol', 'kit']) {
      if (existsSync(join(dir, 'node_modules', PLUGIN_NAME, 'node_modules/@switchyard', nested))) return { problem: `${both}: npm installed a second @switchyard/${nested} under the plugin` };
    }
    writeFileSync(join(dir, 'app.mjs'), HOST_APP);
    const ran = await run('node', ['app.mjs'], dir);
    const expected = JSON.stringify({
      host: current.protocol,
      stamped: current.protocol,
      cjs: 'get_weather',
      outputs: [{ type: 'function_call_output', call_id: 'call-oslo', output: '{"city":"Oslo","tempC":-3,"conditions":"light snow"}' }],
      finalText: 'done',
    });
    const got = ran.output.trim().split('\n').pop();
    if (ran.code !== 0 || got !== expected) return { problem: `${both}: the call did not answer as expected (exit ${ran.code})\nexpected: ${expected}\ngot:      ${ran.output.trim()}` };
    for (const [file, text] of Object.entries(HOST_TYPES)) writeFileSync(join(dir, file), text);
    const types = await run('node', [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], dir);
    if (types.code !== 0) return { problem: `${both}: the host's TypeScript using the plugin's declarations failed to type-check:\n${types.output}` };
    const hostSecs = ((Date.now() - started) / 1000).toFixed(1);
    return { note: `${both}: installed (one protocol, one kit), one call answered, ESM + CJS + types (build ${previous.buildSecs.toFixed(1)}s, host ${hostSecs}s)` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(previous.dir, { recursive: true, force: true });
  }
}
