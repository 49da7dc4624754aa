/**
 * An adopter's path, proven: for each host shape, an empty app outside the monorepo runs the shape's
 * one `npm install` line (the tarballs, install scripts on, peers resolved as npm does), no native
 * module is compiled, and the app runs a turn of that shape.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installArgs, root, type HostShape } from './packs.ts';

/** Runs `command` with `nodeBin` (when given) first on PATH; resolves with its exit code and output. */
export function run(command: string, args: string[], cwd: string, nodeBin?: string): Promise<{ code: number; output: string }> {
  const env = { ...process.env, npm_config_loglevel: 'error', ...(nodeBin ? { PATH: `${nodeBin}:${process.env.PATH}` } : {}) };
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code) => resolvePromise({ code: code ?? 1, output }));
  });
}

/** Files below `dir` whose name ends in `.node` (native modules), as paths relative to it. */
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
 * The native files an install may hold: none for a shape without Code Mode; for the others, only
 * binaries their packages ship prebuilt (isolated-vm's `prebuilds/`, node-pty's platform package) —
 * a compile at install leaves its output under a `build/` folder (node-gyp).
 */
function nativeProblem(shape: HostShape, dir: string): string | undefined {
  const native = nativeModules(join(dir, 'node_modules'));
  const compiled = native.filter((file) => /(^|\/)build\//.test(file));
  if (compiled.length > 0) return `native modules compiled at install: ${compiled.join(', ')}`;
  if (!shape.isolatedVm && native.length > 0) return `native modules installed: ${native.join(', ')}`;
  if (!shape.isolatedVm && existsSync(join(dir, 'node_modules/isolated-vm'))) return 'isolated-vm was installed';
  return undefined;
}

const SCRIPTED = `import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { fixedTimeProvider } from '@switchyard/protocol';
const fail = (what, detail) => { console.error(what, JSON.stringify(detail)); process.exit(1); };
const time = fixedTimeProvider('2026-12-01T15:00:00Z');
`;

/** The app each shape runs: it asserts its own result, prints one line and exits 0. */
const APPS: Record<HostShape['name'], Record<string, string>> = {
  direct: {
    'app.mjs': `${SCRIPTED}import { clockTool } from '@switchyard/tool-clock';
const session = createSession({ toolMode: 'direct', tools: [clockTool()], time });
const model = createScriptedModel([[{ type: 'function_call', call_id: 'c1', namespace: 'clock', name: 'curr_time', arguments: '{}' }], [{ type: 'message', role: 'assistant', content: 'done' }]]);
const result = await session.runTurn({ model, input: 'What time is it?' });
const output = result.items.find((item) => item.type === 'function_call_output');
if (result.finalText !== 'done' || !String(output?.output).includes('2026-12-01')) fail('direct turn', result.items);
const codeMode = createSession({ toolMode: 'code-mode-only', tools: [clockTool()] });
const error = await codeMode.runTurn({ model: createScriptedModel([[]]), input: 'x' }).then(() => undefined, (caught) => caught);
if (error?.code !== 'CONFIG' || !error.message.includes('npm install @switchyard/code-mode-runtime isolated-vm')) fail('code mode without the runtime', String(error));
console.log('direct turn ran on Node ' + process.version);
`,
  },
  'code-mode': { 'app.mjs': readmeExample() },
  mcp: {
    // the official server SDK (2.x) that @switchyard/mcp itself depends on, so the install line brings it
    'server.mjs': `import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
const server = new McpServer({ name: 'weather', version: '1.0.0' });
server.registerTool('forecast', { description: 'Forecast for a city.', inputSchema: z.object({ city: z.string() }) }, async ({ city }) => ({ content: [{ type: 'text', text: city + ': 21 C' }] }));
await server.connect(new StdioServerTransport());
`,
    'app.mjs': `${SCRIPTED}import { mcpTools } from '@switchyard/mcp';
const mcp = await mcpTools({ servers: { weather: { command: process.execPath, args: ['server.mjs'], startupTimeoutMs: 120_000 } }, onWarning: (warning) => fail('mcp warning', warning) });
const session = createSession({ toolMode: 'direct', tools: mcp.executors(), time });
const model = createScriptedModel([[{ type: 'function_call', call_id: 'c1', namespace: 'mcp__weather__', name: 'forecast', arguments: '{"city":"Oslo"}' }], [{ type: 'message', role: 'assistant', content: 'done' }]]);
const result = await session.runTurn({ model, input: 'Weather in Oslo?' });
await mcp.close();
const output = result.items.find((item) => item.type === 'function_call_output');
if (result.finalText !== 'done' || !JSON.stringify(output?.output).includes('Oslo: 21 C')) fail('mcp turn', result.items);
console.log('MCP tool turn ran on Node ' + process.version);
`,
  },
  cli: {},
};

/**
 * The root README's Code Mode example (the first js block after its `adopter-example` marker): the
 * app a reader copies is the one this check runs.
 */
function readmeExample(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /<!-- adopter-example[^>]*-->\n```js\n([\s\S]*?)\n```/.exec(readme);
  if (!block) throw new Error('README.md: no ```js block after <!-- adopter-example … -->');
  return block[1];
}

/** What each app must print (its last line), beyond exiting 0. */
const EXPECTED: Partial<Record<HostShape['name'], RegExp>> = {
  'code-mode': /Oslo 4 C, Lima 21 C.* Oslo is colder\.$/,
  cli: /^demo ok$/,
};

/**
 * The host's own TypeScript, checked as a strict project checks it (`skipLibCheck: false`) against
 * the installed declaration files, without the optional peers (no `@opentelemetry/api`): a tool
 * whose result is typed by an `interface`, a session with a tracer option's type in scope.
 */
async function typeCheckHostApp(dir: string, nodeBin?: string): Promise<string | undefined> {
  const types = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-save', '@types/node@20.19.43'], dir, nodeBin);
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
  const checked = await run('node', [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], dir, nodeBin);
  if (checked.code !== 0) return `the host's TypeScript (skipLibCheck: false, no optional peers) failed to type-check:\n${checked.output}`;
  return undefined;
}

/** Installs `shape` with its one line in a fresh app on `nodeBin` (default: this Node) and runs its app. */
export async function checkHostShape(shape: HostShape, tarballOf: Map<string, string>, nodeBin?: string): Promise<{ problem?: string; note?: string }> {
  const dir = mkdtempSync(join(tmpdir(), `switchyard-${shape.name}-host-`));
  try {
    const version = (await run('node', ['--version'], dir, nodeBin)).output.trim();
    const major = Number(version.replace(/^v/, '').split('.')[0]);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `${shape.name}-host`, version: '0.0.0', private: true, type: 'module' }));
    const started = Date.now();
    const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...installArgs(shape, tarballOf, major)], dir, nodeBin);
    if (install.code !== 0) return { problem: `npm install failed on Node ${version}:\n${install.output}` };
    const installSecs = ((Date.now() - started) / 1000).toFixed(1);
    const native = nativeProblem(shape, dir);
    if (native) return { problem: `on Node ${version}: ${native}` };
    for (const [file, text] of Object.entries(APPS[shape.name])) writeFileSync(join(dir, file), text);
    const ran = shape.name === 'cli' ? await run(join(dir, 'node_modules/.bin/switchyard'), ['demo'], dir, nodeBin) : await run('node', ['app.mjs'], dir, nodeBin);
    const lastLine = ran.output.trim().split('\n').pop() ?? '';
    if (ran.code !== 0 || !(EXPECTED[shape.name]?.test(lastLine) ?? true)) return { problem: `the ${shape.name} app failed on Node ${version}:\n${ran.output}` };
    // the direct host's own TypeScript, as a strict project checks it, without optional peers
    const typed = shape.name === 'direct' ? await typeCheckHostApp(dir, nodeBin) : undefined;
    if (typed) return { problem: `on Node ${version}: ${typed}` };
    const ivm = shape.isolatedVm ? `, isolated-vm ${JSON.parse(readFileSync(join(dir, 'node_modules/isolated-vm/package.json'), 'utf8')).version}` : '';
    return { note: `Node ${version}${ivm}: npm install ${installSecs}s, no compile; ${lastLine}${shape.name === 'direct' ? '; its TypeScript checks with skipLibCheck: false and no @opentelemetry/api' : ''}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

