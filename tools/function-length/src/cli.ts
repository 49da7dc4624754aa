// Lists functions in packages/*/src by line count: `pnpm --filter @switchyard/function-length run list [-- --min 40]`.
import { fileURLToPath } from 'node:url';
import { formatFunction, judge, MAX_FUNCTION_LINES, measurePackages } from './function-length.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const minIndex = process.argv.indexOf('--min');
const min = minIndex >= 0 ? Number(process.argv[minIndex + 1]) : MAX_FUNCTION_LINES + 1;
const functions = measurePackages(root);
for (const fn of functions.filter((fn) => fn.lines >= min)) console.log(formatFunction(fn));
const verdict = judge(functions);
console.log(`\n${functions.length} functions; ${verdict.unjustified.length} over ${MAX_FUNCTION_LINES} lines unjustified, ${verdict.justified.length} justified, ${verdict.stale.length} stale justifications`);
process.exitCode = verdict.unjustified.length + verdict.stale.length > 0 ? 1 : 0;
