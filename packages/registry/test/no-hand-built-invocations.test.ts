import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Tests call tools through `invokeTool` / `testExecutor` (@switchyard/registry/testing): a
// hand-built ToolInvocation skips the lookup, validation, hooks, gate and cancellation a real call
// goes through, so a test passing on it proves less than it seems. This keeps them gone.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Test code: *.test.ts, anything under a test/ folder, and test-support helpers. */
const isTestSource = (path: string) => /\.test\.ts$/.test(path) || /(^|\/)test\//.test(path) || /test-support\.ts$/.test(path);

function files(dir: string, found: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files(path, found);
    else if (path.endsWith('.ts')) found.push(path);
  }
  return found;
}

/** The shapes of a hand-built invocation: the six-field literal, a literal handed to handle(), the type named. */
const HAND_BUILT: ReadonlyArray<[string, RegExp]> = [
  ['a ToolInvocation literal (callId … payload … signal)', /\bcallId\s*:[^;]{0,400}?\bpayload\b[^;]{0,400}?\bsignal\b/],
  // `runtime.handle({ toolName, callId, payload })` hands the runtime a ToolCall, as the router does: allowed.
  ['an object literal passed to handle()', /(?<!runtime)\.handle\(\s*\{/],
  ['a hand-made invocation passed to handle()', /\.handle\(\s*invocation\b/],
  ['the ToolInvocation type', /\bToolInvocation\b/],
];

/** Files allowed to build one, with the reason. */
const ALLOWED: Record<string, string> = {
  // The kit itself: it wraps an executor's handle to observe it, and its fixture breaks the contract on purpose.
  'packages/registry/src/testing/test-executor.ts': 'the conformance kit',
  'packages/registry/test/no-hand-built-invocations.test.ts': 'this check names the shapes',
  // The runtime's own tests hand it ToolCalls ({ toolName, callId, payload } plus per-call options such
  // as a signal): what the router builds from a wire item, not an invocation.
  'packages/registry/src/tool-call-runtime.test.ts': 'ToolCalls for the runtime under test',
  'packages/registry/src/dispatch.test.ts': 'ToolCalls for the runtime under test',
};

describe('test files call tools through the registry', () => {
  it('no test file builds a ToolInvocation by hand (use invokeTool or testExecutor from @switchyard/registry/testing)', () => {
    const offenders: string[] = [];
    for (const group of ['packages', 'tools', 'examples']) {
      for (const path of files(join(root, group))) {
        const name = relative(root, path);
        if (!isTestSource(name) || ALLOWED[name]) continue;
        const text = readFileSync(path, 'utf8');
        for (const [shape, pattern] of HAND_BUILT) {
          const match = pattern.exec(text);
          if (match) offenders.push(`${name}:${text.slice(0, match.index).split('\n').length}: ${shape}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the check finds each shape it names', () => {
    const literal = `await tool.handle({\n  callId: 'c', toolName: tool.name, source: DIRECT_SOURCE,\n  payload, signal: new AbortController().signal, step });`;
    expect(HAND_BUILT.filter(([, pattern]) => pattern.test(literal)).map(([shape]) => shape)).toEqual([
      'a ToolInvocation literal (callId … payload … signal)',
      'an object literal passed to handle()',
    ]);
    expect(HAND_BUILT[2][1].test('executor.handle(invocation(payload))')).toBe(true);
    expect(HAND_BUILT[3][1].test("import type { ToolInvocation } from '@switchyard/protocol';")).toBe(true);
    expect(HAND_BUILT.some(([, pattern]) => pattern.test("await invokeTool(tool, { city: 'Oslo' }, { callId: 'c1' })"))).toBe(false);
  });
});
