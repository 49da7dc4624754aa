import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh empty workspace folder under the system's temporary folder, as its real path (symlinks resolved); the caller removes it. */
export function makeWorkspace(prefix = 'switchyard-workspace-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}
