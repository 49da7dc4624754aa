import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { checkSandbox } from './availability';
import { findExecutable } from './find-executable';

// The probe's processes are counted by a bubblewrap that logs each start, then runs the real one.
const scratch = realpathSync(mkdtempSync('/var/tmp/sandbox-probe-'));
chmodSync(scratch, 0o755);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A `bwrapPath` that appends its arguments to a log (writable by the sandbox user) and runs the real bubblewrap. */
function countingBubblewrap(name: string): { path: string; probes: () => number } {
  const real = findExecutable('bwrap');
  if (!real) throw new Error('bubblewrap is needed for this test');
  const log = join(scratch, `${name}.log`);
  writeFileSync(log, '', { mode: 0o666 });
  chmodSync(log, 0o666);
  const path = join(scratch, `${name}.sh`);
  writeFileSync(path, `#!/bin/sh\necho "$*" >> ${log}\nexec ${real} "$@"\n`, { mode: 0o755 });
  // a probe runs `/bin/sh -c :` in the sandbox; `--version` is the feature check
  return { path, probes: () => readFileSync(log, 'utf8').split('\n').filter((line) => line.endsWith('-- /bin/sh -c :')).length };
}

function workspaces(count: number): string[] {
  return Array.from({ length: count }, (_, index) => {
    const dir = join(scratch, `ws-${Math.random().toString(36).slice(2)}-${index}`);
    mkdirSync(dir);
    return dir;
  });
}

describe('the availability probe', () => {
  test('runs once per policy shape, whatever the number of workspaces and callers at once', async () => {
    const bwrap = countingBubblewrap('shapes');
    const checks = await Promise.all(workspaces(30).map((root) => checkSandbox({ mode: 'workspace-write', root, bwrapPath: bwrap.path })));
    expect(checks.every((check) => check.available)).toBe(true);
    expect(bwrap.probes()).toBe(1);
    // remembered: later workspaces of the same shape start nothing
    await Promise.all(workspaces(5).map((root) => checkSandbox({ mode: 'workspace-write', root, bwrapPath: bwrap.path })));
    expect(bwrap.probes()).toBe(1);
    // other shapes: the restricted read view, read-only, network
    const [root] = workspaces(1);
    await Promise.all([
      checkSandbox({ mode: 'workspace-write', root, bwrapPath: bwrap.path, readableRoots: [] }),
      checkSandbox({ mode: 'workspace-write', root, bwrapPath: bwrap.path, readableRoots: [scratch] }),
      checkSandbox({ mode: 'read-only', root, bwrapPath: bwrap.path }),
      checkSandbox({ mode: 'workspace-write', root, bwrapPath: bwrap.path, network: true }),
    ]);
    expect(bwrap.probes()).toBe(4);
  });

  test('a failure is not remembered: the next check probes again', async () => {
    const broken = join(scratch, 'broken-bwrap.sh');
    writeFileSync(broken, '#!/bin/sh\necho "bwrap: No permissions to creating new namespace" >&2\nexit 1\n', { mode: 0o755 });
    const [root] = workspaces(1);
    const first = await checkSandbox({ mode: 'workspace-write', root, bwrapPath: broken });
    expect(first).toMatchObject({ available: false, missing: 'user-namespaces' });
    writeFileSync(broken, `#!/bin/sh\nexec ${findExecutable('bwrap')} "$@"\n`, { mode: 0o755 });
    expect(await checkSandbox({ mode: 'workspace-write', root, bwrapPath: broken })).toEqual({ available: true });
  });

  test('a missing workspace is refused without a probe', async () => {
    const bwrap = countingBubblewrap('missing');
    const check = await checkSandbox({ mode: 'workspace-write', root: join(scratch, 'no-such-workspace'), bwrapPath: bwrap.path });
    expect(check).toMatchObject({ available: false, missing: 'workspace' });
    expect(bwrap.probes()).toBe(0);
  });
});
