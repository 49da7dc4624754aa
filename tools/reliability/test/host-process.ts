import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { runFixture } from './helpers';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** How a host process of a test ended, with the JSON of its last stdout line. */
export interface HostProcessResult<R> {
  code: number | null;
  signal: string | null;
  /** The last line of its stdout, parsed; undefined when it printed none or not JSON. */
  report?: R;
  /** The last 4,000 characters of its stderr. */
  stderr: string;
  /** The highest 1-minute load average per CPU seen while it ran. */
  loadPerCpu: number;
}

/**
 * Runs a test's host process — `fixture` (a file under `test/fixtures`) with `args`, from source
 * through tsx — as a child of the test, SIGKILLed after `timeoutMs`, so that whatever it runs into
 * is a red test, never a dead runner.
 */
export async function runHostProcess<R>(fixture: string, args: string[], timeoutMs: number): Promise<HostProcessResult<R>> {
  const file = fileURLToPath(new URL(`./fixtures/${fixture}`, import.meta.url));
  let loadPerCpu = 0;
  const sampler = setInterval(() => (loadPerCpu = Math.max(loadPerCpu, loadavg()[0]! / availableParallelism())), 1_000);
  const { code, signal, lastLine, stderr } = await runFixture(file, args, { cwd: ROOT, timeoutMs }).finally(() => clearInterval(sampler));
  let report: R | undefined;
  try {
    report = lastLine ? (JSON.parse(lastLine) as R) : undefined;
  } catch {
    report = undefined;
  }
  return { code, signal, report, stderr, loadPerCpu };
}
