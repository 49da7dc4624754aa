import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Folders under src/ that ship nothing: dependencies, build output and test fixtures. */
const UNSHIPPED_FOLDERS = new Set(['node_modules', 'dist', 'fixtures', '__fixtures__']);
const SOURCE = /\.(m|c)?[jt]sx?$/;
/**
 * Files that ship nothing: tests, fixtures, `test-support.*` helpers, type declarations, build
 * scripts (`build-*.ts`, run by the package's `build` before tsup to write a generated module) and
 * docs scripts (`*-docs.ts`, run by a `docs:*` script to rewrite a README's generated part, and
 * imported by that part's test only — no entry reaches them, so they may import `@switchyard/config`
 * and write synchronously).
 */
const UNSHIPPED_FILE = /\.(test|fixture)\.[cm]?[jt]sx?$|^test-support\.|\.d\.[cm]?ts$|^build-[\w-]+\.[cm]?ts$|-docs\.[cm]?ts$/;

/**
 * The source files a package ships, the package's folder given: everything under its `src/` but
 * tests, fixtures, `test-support.*` helpers, declarations, build and docs scripts, in name order (`[]` without a `src/`).
 */
export function shippedSources(packageDir: string): string[] {
  const out: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!UNSHIPPED_FOLDERS.has(entry.name)) walk(path);
      } else if (SOURCE.test(entry.name) && !UNSHIPPED_FILE.test(entry.name)) {
        out.push(path);
      }
    }
  };
  if (existsSync(join(packageDir, 'src'))) walk(join(packageDir, 'src'));
  return out;
}
