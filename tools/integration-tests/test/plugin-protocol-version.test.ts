import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { VERSION, isSwitchyardError, type ToolExecutor } from '@switchyard/protocol';
import { ToolRegistry } from '@switchyard/registry';
import { createSession } from '@switchyard/session';
import { createScriptedModel } from '@switchyard/session/testing';
import { say } from './helpers';

// A plugin installed with its own copies of @switchyard/kit and @switchyard/protocol (what npm does
// when the plugin's range excludes the host's protocol): the kit stamps the version of the protocol
// copy beside it, and the host refuses a copy of another contract line at registration.
const packages = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'packages');
const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

/** A plugin directory whose node_modules hold a kit and a protocol copy reporting `version`. */
function pluginBuiltAgainst(version: string): string {
  const root = mkdtempSync(join(tmpdir(), 'switchyard-plugin-'));
  roots.push(root);
  for (const name of ['protocol', 'kit']) {
    const target = join(root, 'node_modules', '@switchyard', name);
    cpSync(join(packages, name, 'dist'), join(target, 'dist'), { recursive: true });
    // The manifest as packed: dist only (the workspace's source condition points at files not copied).
    const manifest = readFileSync(join(packages, name, 'package.json'), 'utf8').replace(/"@switchyard\/source": "[^"]*",/g, '');
    writeFileSync(join(target, 'package.json'), name === 'protocol' ? manifest.replace(/"version": "[^"]*"/, `"version": "${version}"`) : manifest);
  }
  for (const file of ['index.js', 'index.cjs']) {
    const path = join(root, 'node_modules', '@switchyard', 'protocol', 'dist', file);
    const text = readFileSync(path, 'utf8');
    const stamped = text.replace(`VERSION = "${VERSION}"`, `VERSION = "${version}"`);
    if (stamped === text) throw new Error(`no VERSION constant in ${path}`);
    writeFileSync(path, stamped);
  }
  writeFileSync(
    join(root, 'plugin.mjs'),
    `import { defineFunctionTool } from '@switchyard/kit';
export const query = defineFunctionTool({ name: 'query', namespace: 'sql', description: 'Runs a query.',
  parameters: { type: 'object', properties: { sql: { type: 'string' } }, required: ['sql'] }, handle: ({ args }) => ({ rows: [args.sql] }) });
`,
  );
  return root;
}

const load = async (root: string) => ((await import(pathToFileURL(join(root, 'plugin.mjs')).href)) as { query: ToolExecutor }).query;
const [major, minor, patch] = VERSION.split('.').map(Number);
const otherLine = major === 0 ? `0.${minor + 1}.0` : `${major + 1}.0.0`;

describe('a plugin built against another @switchyard/protocol', () => {
  it('of another contract line fails registration with both versions named', async () => {
    const query = await load(pluginBuiltAgainst(otherLine));
    expect(query.protocolVersion).toBe(otherLine);
    const expected = `tool sql__query was built against @switchyard/protocol ${otherLine}, and this host runs @switchyard/protocol ${VERSION}; they do not share a contract`;
    let thrown: unknown;
    try {
      createSession({ tools: [query] });
    } catch (error) {
      thrown = error;
    }
    expect(isSwitchyardError(thrown) && thrown.code).toBe('CONFIG');
    expect((thrown as Error).message).toContain(`createSession: option \`tools[0]\`: ${expected}`);
    expect(() => ToolRegistry.from([query])).toThrow(`tool registry: ${expected}`);
  });

  it('of the same line (another patch) registers and runs', async () => {
    const query = await load(pluginBuiltAgainst(`${major}.${minor}.${patch + 3}`));
    const session = createSession({ tools: [query], toolMode: 'direct' });
    try {
      const model = createScriptedModel([[{ type: 'function_call', call_id: 'q1', name: 'query', namespace: 'sql', arguments: '{"sql":"select 1"}' }], [say('done')]]);
      const result = await session.runTurn({ model, input: 'query' });
      const output = result.items.find((item) => item.type === 'function_call_output') as { output: unknown } | undefined;
      expect(output?.output).toBe('{"rows":["select 1"]}');
    } finally {
      await session.shutdown();
    }
  });
});
