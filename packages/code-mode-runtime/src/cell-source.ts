import type ivm from 'isolated-vm';
import { transform } from 'sucrase';
import { MODULE_PREFIX, MODULE_SUFFIX } from './cell-prelude';
import { nullPrototype } from './null-prototype';

/** The module name every cell is compiled under (stack traces show it). */
export const CELL_FILENAME = 'exec_main.mjs';

/**
 * Strips TypeScript types with sucrase (line numbers preserved, imports kept so the import
 * check still sees them). Throws sucrase's SyntaxError on input it cannot parse.
 */
export function stripTypes(source: string): string {
  return transform(source, {
    transforms: ['typescript'],
    disableESTransforms: true,
    keepUnusedImports: true,
    filePath: CELL_FILENAME,
  }).code;
}

/** The compiled cell module, or the error text the cell fails with. */
export type CompiledCell = { module: ivm.Module } | { error: string };

const NULL_OPTIONS = (): ivm.CompileModuleOptions => nullPrototype({ filename: CELL_FILENAME });
// The wrapper prefix shares line 1 with user code; a negative column offset keeps reported columns exact.
const WRAPPED_OPTIONS = (): ivm.CompileModuleOptions => nullPrototype({ filename: CELL_FILENAME, columnOffset: -MODULE_PREFIX.length });

/**
 * Compiles user source as the async module `exec_main.mjs`: wrapped so that its settlement
 * (including a top-level `await` rejection) reaches the prelude's settle function. Static
 * imports fail with "Unsupported import in exec: X"; `typescript` is as in `CreateCellOptions`.
 */
export async function compileCellModule(isolate: ivm.Isolate, source: string, typescript: boolean | undefined): Promise<CompiledCell> {
  let code = source;
  if (typescript === true) {
    try {
      code = stripTypes(source);
    } catch (error) {
      return { error: `SyntaxError: ${(error as Error).message}` };
    }
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
          try {
            code = stripTypes(source);
            continue;
          } catch {
            // not TypeScript either: report the JavaScript error
          }
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

function syntaxErrorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
