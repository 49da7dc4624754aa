/**
 * The layering of the workspace's folders, lowest first:
 *
 *   internal/  private build and test config and test helpers (`@switchyard/config`, …)
 *   packages/  the published packages
 *   examples/  private stories over the packages
 *   tools/     bench, pack check, reliability and integration suites: they import everything
 *
 * A file may import from its own folder and from lower ones only, and `internal/` only by package
 * name (a devDependency `workspace:*`), never by a relative path: the config is a package, not a
 * place. (Tools may still reach into a package's source by path: the reliability suite attacks
 * internals no entry exports.)
 * Every source file counts — shipped code, tests, fixtures, build and test configs — because a
 * test of `packages/x` that reaches into `tools/` makes the package unbuildable without the tools.
 * (`layers.ts` orders the published packages among themselves.)
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { withoutComments } from './layers';

/** Lowest first. */
export const FOLDERS = ['internal', 'packages', 'examples', 'tools'] as const;

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+|^\s*export\s+\*\s+from\s*)['"]([^'"]+)['"]/gm;
const SOURCE = /\.(m|c)?[jt]sx?$/;

/** One broken rule, as a sentence naming the file, what it imports and the rule. */
export type FolderViolation = string;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist' && !entry.name.startsWith('.')) walk(path);
      } else if (SOURCE.test(entry.name)) out.push(path);
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

/** Workspace package name → the top folder it lives in, for every package.json under the four folders. */
function packageFolders(root: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const folder of FOLDERS) {
    for (const file of manifests(join(root, folder))) {
      const name = JSON.parse(readFileSync(file, 'utf8')).name;
      if (typeof name === 'string') names.set(name, folder);
    }
  }
  return names;
}

function manifests(dir: string): string[] {
  const out: string[] = [];
  const walk = (folder: string, depth: number) => {
    if (!existsSync(folder) || depth > 3) return;
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'dist' && !entry.name.startsWith('.')) walk(join(folder, entry.name), depth + 1);
      else if (entry.name === 'package.json') out.push(join(folder, entry.name));
    }
  };
  walk(dir, 0);
  return out;
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Where an import points: the top folder it lands in, and whether it went there by a relative path. */
function target(root: string, file: string, specifier: string, names: Map<string, string>): { folder: string; relative: boolean } | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/')) {
    const landed = relative(root, resolve(file, '..', specifier)).split(sep)[0];
    return (FOLDERS as readonly string[]).includes(landed) ? { folder: landed, relative: true } : undefined;
  }
  const folder = names.get(packageName(specifier));
  return folder ? { folder, relative: false } : undefined;
}

/**
 * Every import under `root` (a repository or a fixture shaped like one) that runs from a lower
 * folder into a higher one, or into internal/ by a relative path. `[]` when the layering holds.
 */
export function findFolderViolations(root: string): FolderViolation[] {
  const names = packageFolders(root);
  const violations: FolderViolation[] = [];
  for (const [level, folder] of FOLDERS.entries()) {
    for (const file of sourceFiles(join(root, folder))) {
      const where = relative(root, file);
      for (const match of withoutComments(readFileSync(file, 'utf8')).matchAll(SPECIFIER)) {
        const to = target(root, file, match[1], names);
        if (!to || to.folder === folder) continue;
        if (FOLDERS.indexOf(to.folder as (typeof FOLDERS)[number]) > level) {
          const allowed = level === 0 ? `${folder}/ imports from no other folder` : `${folder}/ may import from ${FOLDERS.slice(0, level).map((f) => `${f}/`).join(', ')} only`;
          violations.push(`${where} imports '${match[1]}' from ${to.folder}/ — ${allowed}`);
        } else if (to.relative && to.folder === 'internal') {
          violations.push(`${where} imports '${match[1]}' by a relative path into ${to.folder}/ — import the package by its name (a devDependency "workspace:*")`);
        }
      }
    }
  }
  return violations;
}
