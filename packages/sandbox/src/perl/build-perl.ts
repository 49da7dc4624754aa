/**
 * Bundles the launchers' perl programs (`*.pl` in this folder) into `programs.generated.ts`, the
 * texts `launchers.ts` passes to `perl -e`.
 *
 * A program is a `.pl` file whose `#@include <file>` lines are replaced by that file's expanded
 * text (a part shared by several programs exists once); comment lines and blank lines are dropped,
 * since every command's start passes the whole text on perl's command line.
 *
 * Run by the package's `build` script (`node src/perl/build-perl.ts`) before tsup, so the
 * published dist carries the programs built from the sources it ships with; the committed
 * generated file is what the tests (vitest's `@switchyard/source` condition) use, and
 * `perl.test.ts` fails when it differs from a fresh bundle.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { embedding, isMain } from '@switchyard/config/embed';

const FOLDER = fileURLToPath(new URL('.', import.meta.url));

/** Each exported program: its name in the generated module, its file, what it is. */
const PROGRAMS: ReadonlyArray<readonly [name: string, file: string, what: string]> = [
  ['ROOT_LAUNCHER', 'root-launcher.pl', 'The root launcher (see `launchers.ts`).'],
  ['REAPER', 'reaper.pl', 'The reaper of an unsandboxed command (see `launchers.ts`).'],
  ['SPAWNER', 'spawner.pl', 'The long-lived spawner of unsandboxed commands (see `launchers.ts`).'],
  ['SANDBOX_SPAWNER', 'sandbox-spawner.pl', 'The long-lived sandbox launcher (see `launchers.ts`).'],
  ['SPARE_STUB', 'spare-stub.pl', 'The command of a sandbox prepared ahead (see `launchers.ts`).'],
  ['SECCOMP_EXEC', 'seccomp-exec.pl', 'The unprivileged launcher of a host holding inherited descriptors (see `descriptors.ts`).'],
  ['CLOSE_FROM', 'close-from.pl', 'The `close_from(from, keep?)` sub with the constants it needs, for tests.'],
];

const INCLUDE = /^#@include (\S+)$/;

/** `file`'s text with its includes expanded (each file at most once per program, no cycles). */
function expand(file: string, stack: readonly string[] = []): string[] {
  if (stack.includes(file)) throw new Error(`perl: ${[...stack, file].join(' includes ')}`);
  const lines: string[] = [];
  for (const line of readFileSync(`${FOLDER}/${file}`, 'utf8').split('\n')) {
    const include = INCLUDE.exec(line);
    if (include) lines.push(...expand(include[1] as string, [...stack, file]));
    else if (line.trim() !== '' && !/^\s*#/.test(line)) lines.push(line);
  }
  return lines;
}

/** The text of one program: its expanded lines, each ending in a newline. */
export function perlProgram(file: string): string {
  const lines = expand(file);
  // CLOSE_FROM alone needs the constants its sub uses.
  const text = file === 'close-from.pl' ? [...expand('constants.pl'), ...lines] : lines;
  return `${text.join('\n')}\n`;
}

/** The generated module: the programs as string constants. */
export const PROGRAMS_MODULE = embedding(
  import.meta.url,
  './programs.generated.ts',
  () => PROGRAMS.map(([name, file, what]) => ({ name, text: perlProgram(file), what })),
  'src/perl/build-perl.ts from src/perl/*.pl',
  'pnpm --filter @switchyard/sandbox run build:perl',
);

if (isMain(import.meta.url)) PROGRAMS_MODULE.write();
