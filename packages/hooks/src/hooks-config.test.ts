import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isSwitchyardError } from '@switchyard/protocol';
import { createHookEngine } from './hook-engine';
import { preRequest, useScratch } from '../test/helpers';

const tmp = useScratch();

function writeJson(path: string, value: unknown): string {
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

const denyWith = (reason: string) => `echo '{"decision":"block","reason":"${reason}"}'`;

describe('hooks.json configuration', () => {
  it('reads layers lowest precedence first: configured order decides the first blocking reason', async () => {
    const dir = tmp();
    const system = writeJson(dir.path('system.json'), { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `sleep 0.3; ${denyWith('system')}` }] }] } });
    const project = writeJson(dir.path('project.json'), { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: denyWith('project') }] }] } });
    const engine = createHookEngine({ shell: '/bin/sh', configFiles: [system, project] });
    expect(engine.warnings).toEqual([]);
    expect(engine.handlerCounts).toEqual({ PreToolUse: 2, PostToolUse: 0, PostToolUseFailure: 0, PermissionRequest: 0, SessionStart: 0, UserPromptSubmit: 0, Stop: 0, SessionEnd: 0, Interrupt: 0 });
    expect((await engine.runPreToolUse(preRequest({ cwd: dir.dir }))).reason).toBe('system');

    const reversed = createHookEngine({ shell: '/bin/sh', configFiles: [project, system] });
    expect((await reversed.runPreToolUse(preRequest({ cwd: dir.dir }))).reason).toBe('project');
  });

  it('a missing layer is a CONFIG error naming it, unless optional', () => {
    const dir = tmp();
    const absent = dir.path('absent.json');
    let caught: unknown;
    try {
      createHookEngine({ configFiles: [absent] });
    } catch (error) {
      caught = error;
    }
    expect(isSwitchyardError(caught) && caught.code).toBe('CONFIG');
    expect((caught as Error).message).toBe(`createHookEngine: configFiles[0] ${absent} does not exist (pass { path, optional: true } for a layer that may be absent)`);
    expect(createHookEngine({ configFiles: [{ path: absent, optional: true }] }).warnings).toEqual([]);
  });

  it('skips an optional missing layer silently and a broken one with a warning, keeping the others', async () => {
    const dir = tmp();
    const broken = writeJson(dir.path('broken.json'), '{ "hooks": ');
    const good = writeJson(dir.path('good.json'), { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: denyWith('good') }] }] } });
    const engine = createHookEngine({ shell: '/bin/sh', configFiles: [{ path: dir.path('absent.json'), optional: true }, broken, good] });
    expect(engine.warnings).toHaveLength(1);
    expect(engine.warnings[0]).toMatch(new RegExp(`^failed to parse hooks config ${broken}: `));
    expect((await engine.runPreToolUse(preRequest({ cwd: dir.dir }))).reason).toBe('good');
  });

  it('skips bad handlers and groups with warnings, never throwing', async () => {
    const dir = tmp();
    const log = dir.path('ran.txt');
    writeFileSync(log, '');
    const file = writeJson(dir.path('hooks.json'), {
      hooks: {
        PreToolUse: [
          {
            hooks: [
              { type: 'command' },
              { type: 'command', command: '   ' },
              { type: 'prompt', prompt: 'is this safe?' },
              'not an object',
              { type: 'command', command: `echo kept >> "${log}"`, timeout: 'soon' },
            ],
          },
          { matcher: 'Bash' },
          { matcher: 42, hooks: [] },
        ],
        PostToolUse: { not: 'an array' },
        Stop: [{ hooks: [{ type: 'command', command: 'true' }] }],
        Sometime: [],
      },
    });
    const engine = createHookEngine({ shell: '/bin/sh', configFiles: [file] });
    expect(engine.warnings).toEqual([
      `skipping empty hook command in ${file}`,
      `skipping empty hook command in ${file}`,
      `skipping PreToolUse handler of unsupported type "prompt" in ${file}`,
      `a PreToolUse handler in ${file} is not an object; skipped`,
      `a PreToolUse handler in ${file} has a non-numeric timeout; using 600s`,
      `a PreToolUse matcher group in ${file} has no "hooks" array; skipped`,
      `a PreToolUse matcher in ${file} is not a string; group skipped`,
      `PostToolUse in ${file} is not an array of matcher groups; skipped`,
      `unknown hook event "Sometime" in ${file}; skipped`,
    ]);
    expect(engine.handlerCounts).toEqual({ PreToolUse: 1, PostToolUse: 0, PostToolUseFailure: 0, PermissionRequest: 0, SessionStart: 0, UserPromptSubmit: 0, Stop: 1, SessionEnd: 0, Interrupt: 0 });
    await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    expect(readFileSync(log, 'utf8')).toBe('kept\n');
  });

  it('a config that is not an object is a warning', () => {
    const dir = tmp();
    const file = writeJson(dir.path('hooks.json'), [1, 2]);
    expect(createHookEngine({ configFiles: [file] }).warnings).toEqual([`hooks config ${file} is not an object; skipped`]);
  });

  it('clamps a timeout below one second to one second', async () => {
    const dir = tmp();
    const engine = createHookEngine({
      shell: '/bin/sh',
      config: { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'sleep 5; echo late >&2; exit 2', timeout: 0.1 }] }] } },
    });
    // The hook outlives any timeout: it is killed at the clamped 1 s, never at 0.1 s. Only lower
    // bounds on time, which a busy machine cannot break.
    const started = Date.now();
    const outcome = await engine.runPreToolUse(preRequest({ cwd: dir.dir }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(outcome.blocked).toBe(false);
    expect(outcome.warnings).toEqual([expect.stringMatching(/: hook timed out after 1s$/)]);
  });
});
