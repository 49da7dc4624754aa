import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

/**
 * A fresh folder `<base>/ws` laid with `files`; returns both paths. Both sides' prefixes have the
 * same length, so a path in an output counts the same tokens on each side.
 */
export function makeWorkspace(prefix: string, files: Record<string, string> = {}): { base: string; workspace: string } {
  const base = mkdtempSync(join(tmpdir(), `codex-diff-${prefix}-`));
  const workspace = join(base, 'ws');
  mkdirSync(workspace);
  for (const [path, content] of Object.entries(files)) {
    const target = join(workspace, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
  return { base, workspace };
}

/** Every regular file under `root` (relative path → content), for the file comparison. */
export function readTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const stat = statSync(path, { throwIfNoEntry: false });
      if (!stat) continue;
      if (stat.isDirectory()) walk(path);
      else if (stat.isFile()) out[relative(root, path)] = readFileSync(path, 'utf8');
    }
  };
  walk(root);
  return out;
}
