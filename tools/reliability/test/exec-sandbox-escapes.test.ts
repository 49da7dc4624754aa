import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { report } from '../src/profile';
import { bundleEntry } from './bundle';
import { CONTROL_ATTEMPTS, type CorpusReport } from './exec-escapes/corpus';

const here = dirname(fileURLToPath(import.meta.url));

// The corpus runs in child processes from one bundled file (see bundleEntry), so the unprivileged
// run needs nothing but read access to that file.
const bundle = () => bundleEntry(join(here, 'exec-escapes', 'main.ts'));

function runAs(argv: string[]): Promise<CorpusReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], cwd: tmpdir() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      try {
        resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '') as CorpusReport);
      } catch {
        reject(new Error(`corpus run ${argv.join(' ')} exited ${code}: ${stderr || stdout}`));
      }
    });
  });
}

test('exec_command sandbox: the escape corpus leaves nothing behind, as root and as an unprivileged user', async () => {
  const file = await bundle();
  const asRoot = process.geteuid?.() === 0;
  const runs: Array<{ who: string; argv: string[] }> = [{ who: asRoot ? 'root' : `uid ${process.getuid?.()}`, argv: [process.execPath, file] }];
  // As root, the same corpus also runs as uid 65534, which is what a non-root host looks like.
  if (asRoot) runs.push({ who: 'uid 65534', argv: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--', process.execPath, file] });
  const reports = await Promise.all(runs.map((run) => runAs(run.argv)));
  reports.forEach((result, index) => {
    const escaped = result.results.filter((entry) => entry.verdict !== 'held');
    report('exec sandbox escapes', `${runs[index].who}: ${result.attempts} attempts, ${result.results.filter((entry) => entry.verdict === 'escaped').length} escapes, ${result.results.filter((entry) => entry.verdict === 'error').length} errors`);
    expect(result.uid).toBe(index === 0 ? (process.getuid?.() ?? -1) : 65534);
    expect(result.attempts).toBeGreaterThanOrEqual(25);
    expect(escaped, `${runs[index].who}: ${JSON.stringify(escaped, null, 2)}`).toEqual([]);
  });
}, 300_000);

test('control: without a sandbox the same checks catch every harmless attempt', async () => {
  const file = await bundle();
  const result = await runAs([process.execPath, file, '--control']);
  const caught = result.results.filter((entry) => entry.verdict === 'escaped');
  report('exec sandbox escapes', `control (danger-full-access): ${result.attempts} attempts, ${caught.length} caught`);
  expect(result.attempts).toBe(CONTROL_ATTEMPTS.length);
  expect(result.results.filter((entry) => entry.verdict !== 'escaped'), 'every control attempt must be caught').toEqual([]);
}, 120_000);
