import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * A temporary folder shaped like (a part of) the repository for a check to run on, removed after
 * the test file's tests: `write(path, text)` creates the file under `root`, and its folders.
 */
export function fixtureTree(prefix: string): { root: string; write(path: string, text: string): void } {
  const root = mkdtempSync(join(tmpdir(), `switchyard-${prefix}-`));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  return {
    root,
    write(path, text) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    },
  };
}
