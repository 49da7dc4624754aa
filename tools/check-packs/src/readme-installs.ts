import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';

/** The npm package an import specifier loads (`@scope/name/sub` → `@scope/name`), or undefined for Node's own and relative ones. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('node:') || specifier.startsWith('.') || builtinModules.includes(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** A name as written on an install line, without its version (`isolated-vm@5.0.4` → `isolated-vm`). */
function withoutVersion(word: string): string {
  const at = word.lastIndexOf('@');
  return at > 0 ? word.slice(0, at) : word;
}

/**
 * What is wrong with a README's install lines: a package its `ts` examples import that no
 * `npm install` line names (a reader copying both would get "Cannot find module"), and any install
 * line that is not npm's (contributors use pnpm; readers of a package's README install with npm).
 */
export function readmeInstallProblems(markdown: string): string[] {
  const installed = new Set<string>();
  const problems: string[] = [];
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block[1].split('\n')) {
      const command = line.split('#')[0].trim();
      if (/^(pnpm add|yarn add|pnpm install|yarn install)\b/.test(command)) problems.push(`install line is not npm's: ${command}`);
      const words = /^npm (?:install|i)\s+(.*)$/.exec(command)?.[1].split(/\s+/) ?? [];
      for (const word of words) if (!word.startsWith('-')) installed.add(withoutVersion(word));
    }
  }
  const imported = new Set<string>();
  for (const block of markdown.matchAll(/```ts\n([\s\S]*?)```/g)) {
    for (const match of block[1].matchAll(/\bfrom '([^']+)'/g)) {
      const name = packageOf(match[1]);
      if (name) imported.add(name);
    }
  }
  for (const name of imported) if (!installed.has(name)) problems.push(`an example imports ${name}, which no npm install line names`);
  return problems;
}

/** `readmeInstallProblems` of every package README under `root/packages`, keyed by package folder. */
export function packageReadmeInstallProblems(root: string): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const folder of readdirSync(join(root, 'packages'))) {
    const path = join(root, 'packages', folder, 'README.md');
    if (!existsSync(path)) continue;
    const problems = readmeInstallProblems(readFileSync(path, 'utf8'));
    if (problems.length > 0) found[folder] = problems;
  }
  return found;
}
