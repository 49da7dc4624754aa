/**
 * The dependency layering of the published packages, and a check that nothing imports upward.
 *
 * A package may depend on packages of lower layers only — never on its own layer, never on a higher
 * one — through its package.json (`dependencies`, `peerDependencies`, `optionalDependencies`) and
 * through the imports of its shipped source (`src/**`; tests, `test-support.*` helpers and
 * fixtures aside). Those and `devDependencies` are exempt: a test may drive a package from above (a code-mode test runs a real
 * code-mode runtime), and nothing of it ships. Two more rules ride along:
 * - the built-in tools (`tool-*`) depend on protocol, kit and (for the process tools) sandbox only;
 * - the contract, `@switchyard/protocol`, has no dependencies and is platform-neutral: its source
 *   names no `Buffer`, no `process` and imports no Node built-in.
 *
 * The layers were read off the package.json files when the kit was split out of protocol; a new
 * package must be placed here before it can pass.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Lowest first. The README's "Dependency graph" section draws the same table. */
export const LAYERS: readonly (readonly string[])[] = [
  ['protocol'],
  ['kit'],
  ['planner', 'registry', 'hooks', 'sandbox'],
  ['code-mode-runtime', 'mcp', 'openai', 'ai-sdk', 'tool-clock', 'tool-context-remaining', 'tool-apply-patch', 'tool-exec'],
  ['code-mode', 'code-mode-nats'],
  ['session'],
  ['cli'],
];

/** What a built-in tool may depend on. */
const BUILT_IN_TOOL_DEPENDENCIES = new Set(['protocol', 'kit', 'sandbox']);

const SCOPE = '@switchyard/';
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"](@switchyard\/[a-z0-9-]+)(?:\/[^'"]*)?['"]/gm;
const NODE_BUILTIN = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"](node:[^'"]+)['"]/gm;
const PLATFORM_GLOBAL = /\b(Buffer|process)\s*[.([]/g;

/** One broken rule, as a sentence naming the package, the file or field, and the rule. */
export type LayerViolation = string;

function layerOf(name: string): number {
  return LAYERS.findIndex((layer) => layer.includes(name));
}

/** Source files a package ships: everything under src/ but tests, `test-support` helpers and fixtures. */
function shippedSources(dir: string): string[] {
  const out: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== '__fixtures__') walk(path);
      } else if (/\.(m|c)?[jt]sx?$/.test(entry.name) && !/\.(test|fixture)\.[cm]?[jt]sx?$/.test(entry.name) && !/^test-support\./.test(entry.name) && !/\.d\.ts$/.test(entry.name)) {
        out.push(path);
      }
    }
  };
  if (existsSync(join(dir, 'src'))) walk(join(dir, 'src'));
  return out;
}

/** Source text without comments, so a comment that names a package or `process` is no import. */
export function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/**
 * Every violation of the layering under `root/packages` (a repository or a fixture shaped like
 * one). Returns `[]` when the layering holds. Reads package.json files and source text only.
 */
export function findLayerViolations(root: string): LayerViolation[] {
  const violations: LayerViolation[] = [];
  const packagesDir = join(root, 'packages');
  for (const folder of readdirSync(packagesDir).sort()) {
    const dir = join(packagesDir, folder);
    if (!existsSync(join(dir, 'package.json'))) continue;
    const json = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    if (json.private) continue;
    const self = String(json.name).startsWith(SCOPE) ? String(json.name).slice(SCOPE.length) : String(json.name);
    const level = layerOf(self);
    if (level < 0) {
      violations.push(`${json.name} is in no layer: place it in LAYERS (tools/check-packs/src/layers.ts) and the README's dependency graph`);
      continue;
    }
    const check = (target: string, where: string) => {
      if (target === self) return;
      const targetLevel = layerOf(target);
      if (targetLevel < 0) violations.push(`${json.name}: ${where} names ${SCOPE}${target}, which is in no layer`);
      else if (targetLevel >= level) {
        const relation = targetLevel === level ? 'its own layer' : 'a higher layer';
        violations.push(`${json.name} (layer ${level}): ${where} imports ${SCOPE}${target} (layer ${targetLevel}, ${relation}) — a package may depend on lower layers only`);
      } else if (self.startsWith('tool-') && !BUILT_IN_TOOL_DEPENDENCIES.has(target)) {
        violations.push(`${json.name}: ${where} imports ${SCOPE}${target} — a built-in tool depends on protocol, kit and sandbox only`);
      }
    };
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const dep of Object.keys(json[field] ?? {})) if (dep.startsWith(SCOPE)) check(dep.slice(SCOPE.length), `package.json ${field}`);
    }
    for (const file of shippedSources(dir)) {
      const text = withoutComments(readFileSync(file, 'utf8'));
      const where = relative(root, file);
      for (const match of text.matchAll(IMPORT)) check(match[1].slice(SCOPE.length), where);
      if (self === 'protocol') {
        for (const match of text.matchAll(NODE_BUILTIN)) violations.push(`${json.name}: ${where} imports ${match[1]} — the contract is platform-neutral`);
        for (const match of text.matchAll(PLATFORM_GLOBAL)) violations.push(`${json.name}: ${where} uses ${match[1]} — the contract is platform-neutral`);
      }
    }
    if (self === 'protocol') {
      for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
        const names = Object.keys(json[field] ?? {});
        if (names.length > 0) violations.push(`${json.name}: package.json ${field} lists ${names.join(', ')} — the contract has no dependencies`);
      }
    }
  }
  return violations;
}
