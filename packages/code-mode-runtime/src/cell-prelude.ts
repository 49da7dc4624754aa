import { PRELUDE_CLOSURE } from './prelude/prelude-bundle.generated';

/**
 * The closure body that installs a cell's globals inside its isolate: `src/prelude/*.ts` (entry
 * `install-prelude.ts`), bundled at build time by `src/prelude/build-prelude.ts`. Evaluated with
 * `context.evalClosure(CELL_PRELUDE, [post, configJson, storedPairs, flow], { result: { reference: true } })`;
 * the messages that cross are typed in `prelude/bridge.ts`.
 */
export const CELL_PRELUDE: string = PRELUDE_CLOSURE;

/** Prepended to user code (same line, so line numbers hold); takes the settle function before user code runs. */
export const MODULE_PREFIX =
  'const __switchyard_settle = globalThis.__switchyard_take(); let __switchyard_ok = false; try { ';

/** Appended to user code: a module-level success or failure settles the cell (an `exit()` sentinel counts as success). */
export const MODULE_SUFFIX =
  '\n;__switchyard_ok = true; } catch (__switchyard_error) { __switchyard_settle(true, __switchyard_error); } if (__switchyard_ok) __switchyard_settle(false);';
