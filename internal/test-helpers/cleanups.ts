import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/** What a test registers to be undone after it, last registered first. */
export interface Cleanups {
  /** Returns `thing`, and runs `cleanup(thing)` after the test (a session's shutdown, a server's close). */
  defer<T>(thing: T, cleanup: (thing: T) => unknown): T;
  /** A new empty folder under the system's temporary folder, removed after the test. */
  scratch(prefix: string): string;
}

/** Call at the top of a test file: everything registered in a test is undone in its `afterEach`. */
export function useCleanups(): Cleanups {
  const pending: Array<() => unknown> = [];
  afterEach(async () => {
    for (const cleanup of pending.splice(0).reverse()) await cleanup();
  });
  return {
    defer(thing, cleanup) {
      pending.push(() => cleanup(thing));
      return thing;
    },
    scratch(prefix) {
      const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
      pending.push(() => rmSync(dir, { recursive: true, force: true }));
      return dir;
    },
  };
}
