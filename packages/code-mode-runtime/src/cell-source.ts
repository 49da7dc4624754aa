import type ivm from 'isolated-vm';
import { CELL_FILENAME } from './cell-names';
import { MODULE_PREFIX, MODULE_SUFFIX } from './cell-prelude';
import { nullPrototype } from './null-prototype';
import type { StripOutcome } from './type-stripper';

export { stripTypes } from './type-stripper';

/** The compiled cell module, the error text the cell fails with, or the limit stripping hit. */
export type CompiledCell = { module: ivm.Module } | { error: string } | { limit: 'time' | 'heap' };

const NULL_OPTIONS = (): ivm.CompileModuleOptions => nullPrototype({ filename: CELL_FILENAME });
// The wrapper prefix shares line 1 with user code; a negative column offset keeps reported columns exact.
const WRAPPED_OPTIONS = (): ivm.CompileModuleOptions => nullPrototype({ filename: CELL_FILENAME, columnOffset: -MODULE_PREFIX.length });

/**
 * Compiles user source as the async module `exec_main.mjs`: wrapped so that its settlement
 * (including a top-level `await` rejection) reaches the prelude's settle function. Static
 * imports fail with "Unsupported import in exec: X"; `typescript` is as in `CreateCellOptions`;
 * `strip` removes types (off this thread, bounded: see `type-stripper.ts`).
 */
export async function compileCellModule(
  isolate: ivm.Isolate,
  source: string,
  typescript: boolean | undefined,
  strip: (source: string) => Promise<StripOutcome>,
): Promise<CompiledCell> {
  let code = source;
  if (typescript === true) {
    const outcome = await strip(source);
    if ('limit' in outcome) return outcome;
    if ('error' in outcome) return { error: `SyntaxError: ${outcome.error}` };
    code = outcome.code;
  }
  let stripped = typescript === true;
  for (;;) {
    try {
      const module = await isolate.compileModule(MODULE_PREFIX + code + MODULE_SUFFIX, WRAPPED_OPTIONS());
      return { module };
    } catch (wrappedError) {
      // Compile the bare source for V8's exact message, import specifiers and TS detection.
      let bare: ivm.Module;
      try {
        bare = await isolate.compileModule(code, NULL_OPTIONS());
      } catch (bareError) {
        if (typescript === undefined && !stripped) {
          stripped = true;
          const outcome = await strip(source);
          if ('limit' in outcome) return outcome;
          if ('code' in outcome) {
            code = outcome.code;
            continue;
          }
          // not TypeScript either: report the JavaScript error
        }
        return { error: syntaxErrorText(bareError) };
      }
      const specifiers = bare.dependencySpecifiers;
      bare.release();
      if (specifiers.length > 0) return { error: `Unsupported import in exec: ${specifiers[0]}` };
      return { error: syntaxErrorText(wrappedError) };
    }
  }
}

/** V8's text of a compile error, without the ` [exec_main.mjs:1:9]` isolated-vm appends (the reference shows V8's message alone). */
function syntaxErrorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message.replace(/ \[[^\]\n]*:\d+:\d+\]$/, '')}`;
  return String(error);
}
