/**
 * The public surface of every published package: the names each entry point of its `exports` map
 * exports (values and types apart), read from the sources with the TypeScript checker, so that a new
 * or removed export is a visible diff against a committed snapshot, the root README's table of
 * public names can be regenerated from it, and each package README's `## API` table can be held to
 * exactly those names.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

export interface EntrySurface {
  values: string[];
  types: string[];
}

/** Entry-point specifier (`@switchyard/registry`, `@switchyard/registry/testing`) → its export names. */
export type Surface = Record<string, EntrySurface>;

export interface EntryPoint {
  specifier: string;
  /** The package folder. */
  dir: string;
  /** The source file the `@switchyard/source` condition points at. */
  source: string;
  /** Whether the entry has a `require` condition (a CJS build beside the ESM one). */
  require: boolean;
  /**
   * A `./testing` entry of a package with a vitest peer: it imports the test runner, which loads
   * only inside a vitest run, so it cannot be loaded by a bare `node` (its types still check).
   */
  vitestOnly: boolean;
}

/** The fields of a package.json the entry points are read from. */
export interface EntryManifest {
  name: string;
  exports?: Record<string, unknown>;
  peerDependencies?: Record<string, string>;
}

/** One package's entry points (every `exports` key but `./package.json`), in the exports map's order. */
export function packageEntries(dir: string, json: EntryManifest): EntryPoint[] {
  return Object.entries(json.exports ?? {})
    .filter(([key]) => key !== './package.json')
    .map(([key, target]) => {
      const source = sourceOf(target);
      if (!source) throw new Error(`${json.name}: exports["${key}"] has no "@switchyard/source" condition`);
      return {
        specifier: key === '.' ? json.name : `${json.name}${key.slice(1)}`,
        dir,
        source: resolve(dir, source),
        require: typeof target === 'object' && target !== null && 'require' in target,
        vitestOnly: key === './testing' && json.peerDependencies?.vitest !== undefined,
      };
    });
}

/** The published packages' entry points (every `exports` key but `./package.json`), sorted. */
export function entryPoints(root: string): EntryPoint[] {
  const found: EntryPoint[] = [];
  for (const folder of readdirSync(join(root, 'packages')).sort()) {
    const dir = join(root, 'packages', folder);
    if (!existsSync(join(dir, 'package.json'))) continue;
    const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    if (json.private) continue;
    found.push(...packageEntries(dir, json));
  }
  return found.sort((a, b) => a.specifier.localeCompare(b.specifier));
}

function sourceOf(target: unknown): string | undefined {
  if (!target || typeof target !== 'object') return undefined;
  const record = target as Record<string, unknown>;
  if (typeof record['@switchyard/source'] === 'string') return record['@switchyard/source'];
  for (const nested of Object.values(record)) {
    const found = sourceOf(nested);
    if (found) return found;
  }
  return undefined;
}

/** Reads every entry point's export names with one TypeScript program over all of them. */
export function readSurface(root: string, entries: EntryPoint[]): Surface {
  const config = ts.readConfigFile(join(root, 'tsconfig.base.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const program = ts.createProgram({ rootNames: entries.map((entry) => entry.source), options: { ...options, noEmit: true } });
  const checker = program.getTypeChecker();
  const surface: Surface = {};
  for (const entry of entries) {
    const file = program.getSourceFile(entry.source);
    const moduleSymbol = file && checker.getSymbolAtLocation(file);
    if (!moduleSymbol) throw new Error(`${entry.specifier}: cannot read ${entry.source}`);
    const values: string[] = [];
    const types: string[] = [];
    for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
      (isValue(symbol, checker) ? values : types).push(symbol.getName());
    }
    surface[entry.specifier] = { values: values.sort(), types: types.sort() };
  }
  return surface;
}

/** A value export is one a JavaScript importer can read: not declared, or re-exported, as type-only. */
function isValue(symbol: ts.Symbol, checker: ts.TypeChecker): boolean {
  let current = symbol;
  for (let hops = 0; current.flags & ts.SymbolFlags.Alias && hops < 50; hops++) {
    if (current.declarations?.some(isTypeOnlyDeclaration)) return false;
    const next = checker.getImmediateAliasedSymbol(current);
    if (!next) break;
    current = next;
  }
  if (current.flags & ts.SymbolFlags.Alias) current = checker.getAliasedSymbol(current);
  return (current.flags & ts.SymbolFlags.Value) !== 0;
}

function isTypeOnlyDeclaration(node: ts.Declaration): boolean {
  if (ts.isExportSpecifier(node)) return node.isTypeOnly || node.parent.parent.isTypeOnly;
  if (ts.isImportSpecifier(node)) return node.isTypeOnly || node.parent.parent.isTypeOnly;
  if (ts.isImportClause(node)) return node.isTypeOnly;
  return false;
}

/** One line per name that differs between two surfaces (`+` added, `-` removed), sorted by entry. */
export function surfaceDiff(committed: Surface, current: Surface): string[] {
  const lines: string[] = [];
  for (const specifier of [...new Set([...Object.keys(committed), ...Object.keys(current)])].sort()) {
    const before = committed[specifier];
    const after = current[specifier];
    if (!before) lines.push(`+ ${specifier} (new entry point)`);
    if (!after) lines.push(`- ${specifier} (entry point removed)`);
    for (const kind of ['values', 'types'] as const) {
      const was = new Set(before?.[kind] ?? []);
      const now = new Set(after?.[kind] ?? []);
      const label = kind === 'values' ? 'value' : 'type';
      for (const name of now) if (!was.has(name)) lines.push(`+ ${specifier}: ${label} ${name}`);
      for (const name of was) if (!now.has(name)) lines.push(`- ${specifier}: ${label} ${name}`);
    }
  }
  return lines;
}

/**
 * An entry point for Switchyard's own packages (`@switchyard/kit/internal`): held to the snapshot
 * like any other, so a change is a visible diff, but not under semver — so not in the root README's
 * table of public names, and not in its package README's `## API` table.
 */
export function isInternalEntry(specifier: string): boolean {
  return specifier.endsWith('/internal');
}

/** The most values a package's root entry may export: more means two audiences share one entry. */
export const MAX_ROOT_VALUES = 25;

/** The shared vocabulary every package speaks: its root is the contract itself, exempt from the cap. */
const ROOT_CAP_EXEMPT = new Set(['@switchyard/protocol']);

/** One line per package whose root entry exports more than {@link MAX_ROOT_VALUES} values. */
export function oversizedRoots(surface: Surface): string[] {
  const problems: string[] = [];
  for (const [specifier, { values }] of Object.entries(surface)) {
    const isRoot = /^@[^/]+\/[^/]+$/.test(specifier);
    if (!isRoot || ROOT_CAP_EXEMPT.has(specifier) || values.length <= MAX_ROOT_VALUES) continue;
    problems.push(
      `${specifier}: the root entry exports ${values.length} values, more than ${MAX_ROOT_VALUES}: keep there what a host or tool author uses, ` +
        `and move what only Switchyard's own packages import to \`${specifier}/internal\` (or a subpath for its own audience)`,
    );
  }
  return problems;
}

export const README_START = '<!-- public-api:start (generated by `pnpm run exports:update`; do not edit) -->';
export const README_END = '<!-- public-api:end -->';

/** The root README's table of public names, one row per entry point (internal ones left out). */
export function renderSurfaceTable(surface: Surface): string {
  const rows = Object.entries(surface).filter(([specifier]) => !isInternalEntry(specifier)).map(([specifier, { values, types }]) => {
    const list = (names: string[]) => (names.length ? names.map((name) => `\`${name}\``).join(', ') : '—');
    return `| \`${specifier}\` | ${list(values)} | ${list(types)} |`;
  });
  return [README_START, '| entry point | values | types |', '|---|---|---|', ...rows, README_END].join('\n');
}

/** The README with its generated section replaced, or undefined when it has no markers. */
export function replaceSurfaceTable(readme: string, surface: Surface): string | undefined {
  const start = readme.indexOf(README_START);
  const end = readme.indexOf(README_END);
  if (start < 0 || end < start) return undefined;
  return readme.slice(0, start) + renderSurfaceTable(surface) + readme.slice(end + README_END.length);
}

/**
 * The names a package README documents in its `## API` section: the first backticked name in the
 * first cell of each table row (`createSession(options)` → `createSession`). A `###` heading that
 * names a subpath in backticks (`` `@switchyard/registry/testing` ``) starts that entry point's
 * rows; rows before any such heading belong to the package's main entry point.
 */
export function documentedNames(readme: string, packageName: string): Map<string, Set<string>> {
  const documented = new Map<string, Set<string>>();
  let inApi = false;
  let entry = packageName;
  for (const line of readme.split('\n')) {
    if (/^##\s/.test(line)) {
      inApi = /^##\s+API\s*$/.test(line);
      entry = packageName;
      continue;
    }
    if (!inApi) continue;
    const heading = /^###\s.*`(@switchyard\/[^`]+)`/.exec(line);
    if (heading) {
      entry = heading[1]!;
      continue;
    }
    const cell = /^\|\s*([^|]*)\|/.exec(line);
    const name = cell && /`(?:new\s+)?([A-Za-z_$][\w$]*)/.exec(cell[1]!);
    if (!name) continue;
    if (!documented.has(entry)) documented.set(entry, new Set());
    documented.get(entry)!.add(name[1]!);
  }
  return documented;
}

/** What a package README's `## API` tables get wrong against the surface of its entry points. */
export function readmeProblems(readme: string, packageName: string, surface: Surface): string[] {
  const documented = documentedNames(readme, packageName);
  const problems: string[] = [];
  const all = Object.keys(surface).filter((specifier) => specifier === packageName || specifier.startsWith(`${packageName}/`));
  const entries = all.filter((specifier) => !isInternalEntry(specifier));
  for (const specifier of entries) {
    const names = documented.get(specifier) ?? new Set<string>();
    const exported = new Set([...surface[specifier]!.values, ...surface[specifier]!.types]);
    for (const name of exported) if (!names.has(name)) problems.push(`${specifier}: \`${name}\` is exported but not in the README's API table`);
    for (const name of names) if (!exported.has(name)) problems.push(`${specifier}: \`${name}\` is in the README's API table but not exported`);
  }
  for (const specifier of documented.keys()) {
    if (isInternalEntry(specifier) && all.includes(specifier)) problems.push(`${specifier}: an internal entry point is not under semver: leave it out of the API table`);
    else if (!entries.includes(specifier)) problems.push(`${specifier}: the README documents an entry point the package does not export`);
  }
  return problems;
}
