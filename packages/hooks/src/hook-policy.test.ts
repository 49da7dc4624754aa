import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HookEndEvent } from '@switchyard/protocol';
import { createHookEngine } from './hook-engine';
import { preRequest, useScratch } from '../test/helpers';
import { configError } from '@switchyard/config/config-error';

const tmp = useScratch();

/** A policy script as a user writes it: refuses `rm -rf` with exit 2 and a reason on stderr. */
const POLICY = `let text = '';
process.stdin.on('data', (chunk) => (text += chunk));
process.stdin.on('end', () => {
  const input = JSON.parse(text);
  if (String(input.tool_input.command).includes('rm -rf')) {
    process.stderr.write('rm -rf is not allowed');
    process.exit(2);
  }
});
`;

/** A folder holding hooks.json (with `hooks`) and hooks/policy.mjs, beside a separate session folder. */
function layout(hooks: unknown) {
  const dir = tmp();
  const policyDir = join(dir.dir, 'policy');
  const sessionDir = join(dir.dir, 'work');
  mkdirSync(join(policyDir, 'hooks'), { recursive: true });
  mkdirSync(sessionDir);
  writeFileSync(join(policyDir, 'hooks', 'policy.mjs'), POLICY);
  const file = join(policyDir, 'hooks.json');
  writeFileSync(file, JSON.stringify({ hooks }));
  return { dir, policyDir, sessionDir, file };
}

function ends(engine: ReturnType<typeof createHookEngine>): HookEndEvent[] {
  const seen: HookEndEvent[] = [];
  engine.on('hook-end', (event) => seen.push(event));
  return seen;
}

describe('a command hook runs beside its hooks.json', () => {
  it('`node hooks/policy.mjs` from a hooks.json outside the session cwd blocks rm -rf', async () => {
    const { sessionDir, file } = layout({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'node hooks/policy.mjs' }] }] });
    const engine = createHookEngine({ configFiles: [file] });
    const blocked = await engine.runPreToolUse(preRequest({ toolInput: { command: 'rm -rf data.csv' }, cwd: sessionDir }));
    expect(blocked).toEqual({ blocked: true, reason: 'rm -rf is not allowed', additionalContexts: [], warnings: [] });
    const allowed = await engine.runPreToolUse(preRequest({ toolInput: { command: 'ls' }, cwd: sessionDir }));
    expect(allowed).toEqual({ blocked: false, additionalContexts: [], warnings: [] });
  });

  it('the working directory is the hooks.json folder; the session cwd is on stdin and in SWITCHYARD_SESSION_CWD', async () => {
    const { policyDir, sessionDir, file } = layout({ PreToolUse: [{ hooks: [{ type: 'command', command: 'pwd > where.txt; echo "$SWITCHYARD_SESSION_CWD|$SWITCHYARD_HOOKS_DIR" >> where.txt; cat > stdin.json' }] }] });
    const engine = createHookEngine({ configFiles: [file] });
    await engine.runPreToolUse(preRequest({ cwd: sessionDir }));
    expect(readFileSync(join(policyDir, 'where.txt'), 'utf8')).toBe(`${policyDir}\n${sessionDir}|${policyDir}\n`);
    expect(JSON.parse(readFileSync(join(policyDir, 'stdin.json'), 'utf8')).cwd).toBe(sessionDir);
  });
});

describe('loud by default', () => {
  it('a hook that could not start still ends with hook-end (outcome failed, the error) and a warning', async () => {
    const { policyDir, sessionDir, file } = layout({ PreToolUse: [{ hooks: [{ type: 'command', command: 'true' }] }] });
    const engine = createHookEngine({ configFiles: [file] });
    const seen = ends(engine);
    // the folder it runs in is gone: the spawn fails
    rmSync(policyDir, { recursive: true, force: true });
    const outcome = await engine.runPreToolUse(preRequest({ cwd: sessionDir }));
    expect(outcome.blocked).toBe(false);
    expect(outcome.warnings).toEqual([expect.stringMatching(/^hook pre-tool-use:0:.*hooks\.json:call-1 failed: failed to spawn hook: /)]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ outcome: 'failed', required: false, hook: `hook "true" (${file})`, error: expect.stringMatching(/^failed to spawn hook: /) });
  });
});

describe('required hooks', () => {
  it('a required hook that fails blocks the call and names itself; hook-end carries the error', async () => {
    const { sessionDir, file } = layout({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'node hooks/missing.mjs', required: true }] }] });
    const engine = createHookEngine({ configFiles: [file] });
    const seen = ends(engine);
    const outcome = await engine.runPreToolUse(preRequest({ cwd: sessionDir }));
    expect(outcome).toMatchObject({ blocked: true, reason: `required hook "node hooks/missing.mjs" (${file}) failed: hook exited with code 1` });
    expect(seen[0]).toMatchObject({ outcome: 'block', required: true, error: 'hook exited with code 1' });
  });

  it('a timeout of a required hook blocks too; the same hook not required fails open', async () => {
    const config = (required: boolean) => ({ hooks: { PreToolUse: [{ hooks: [{ type: 'command' as const, command: 'sleep 5', timeout: 1, required }] }] } });
    const closed = await createHookEngine({ config: config(true) }).runPreToolUse(preRequest());
    expect(closed).toMatchObject({ blocked: true, reason: 'required hook "sleep 5" (<config:0>) failed: hook timed out after 1s' });
    const open = await createHookEngine({ config: config(false) }).runPreToolUse(preRequest());
    expect(open.blocked).toBe(false);
  });

  it('a required function hook that throws blocks, named', async () => {
    const engine = createHookEngine({ functionHooks: [{ event: 'PreToolUse', name: 'guard', required: true, run: () => { throw new Error('policy db down'); } }] });
    expect(await engine.runPreToolUse(preRequest())).toMatchObject({ blocked: true, reason: 'required function hook guard (<function:guard>) failed: function hook failed: policy db down' });
  });

  it('engine-wide required: every hook is required', async () => {
    const engine = createHookEngine({ required: true, config: { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'exit 3' }] }] } } });
    expect(await engine.runPreToolUse(preRequest())).toMatchObject({ blocked: true, reason: 'required hook "exit 3" (<config:0>) failed: hook exited with code 3' });
  });

  it('a required hook that cannot load refuses creation with a CONFIG error', async () => {
    expect(await configError(() => createHookEngine({ config: { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: ' ', required: true }] }] } } }))).toBe(
      'createHookEngine: a required hook cannot be loaded: skipping empty hook command in <config:0>',
    );
    expect(await configError(() => createHookEngine({ config: { hooks: { PreToolUse: [{ matcher: '(', hooks: [{ type: 'command', command: 'true', required: true }] }] } } }))).toMatch(
      /^createHookEngine: a required hook cannot be loaded: invalid matcher "\(" in <config:0>: /,
    );
    const dir = tmp();
    writeFileSync(dir.path('broken.json'), '{ "hooks": ');
    expect(await configError(() => createHookEngine({ required: true, configFiles: [dir.path('broken.json')] }))).toMatch(/^createHookEngine: a required hook cannot be loaded: failed to parse hooks config /);
    // not required: the same problems are warnings
    expect(createHookEngine({ config: { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: ' ' }] }] } } }).warnings).toEqual(['skipping empty hook command in <config:0>']);
  });
});

describe('the default shell', () => {
  it('is /bin/sh -c: no login profile is read, and a trivial hook runs in well under a second', async () => {
    const dir = tmp();
    const marker = dir.path('profile-read');
    writeFileSync(dir.path('.profile'), `echo read > "${marker}"\n`);
    const config = { hooks: { PreToolUse: [{ hooks: [{ type: 'command' as const, command: 'exit 0' }] }] } };
    const engine = createHookEngine({ config, env: { HOME: dir.dir, ENV: '' } });
    const times: number[] = [];
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      expect((await engine.runPreToolUse(preRequest({ cwd: dir.dir }))).warnings).toEqual([]);
      times.push(performance.now() - started);
    }
    // an order of magnitude: a login shell took ~5 s per hook on a user's machine
    expect(Math.min(...times)).toBeLessThan(1000);
    expect(() => readFileSync(marker)).toThrow();
    // asked for, a login shell reads the profile
    await createHookEngine({ config, env: { HOME: dir.dir }, shell: '/bin/sh', loginShell: true }).runPreToolUse(preRequest({ cwd: dir.dir }));
    expect(readFileSync(marker, 'utf8')).toBe('read\n');
  });
});
