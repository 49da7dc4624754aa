/**
 * Entry of the escape corpus child process: runs every attempt and prints the JSON report.
 * `--control` runs the control attempts without a sandbox instead (each must be caught).
 */
import { ATTEMPTS, CONTROL_ATTEMPTS, runCorpus } from './corpus';

const control = process.argv.includes('--control');
const attempts = control
  ? ATTEMPTS.filter((attempt) => CONTROL_ATTEMPTS.includes(attempt.name)).map((attempt) => ({ ...attempt, mode: 'danger-full-access' as const }))
  : ATTEMPTS;
const report = await runCorpus(attempts);
process.stdout.write(`${JSON.stringify(report)}\n`);
