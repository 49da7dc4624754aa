import { accessSync, constants as fsConstants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Synchronous: one `access` of one path (no directory is listed), called by {@link findExecutable}. */
function isExecutable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves a program name on `PATH` (or checks an explicit path). `undefined` when not found.
 * Synchronous: one `access` per `PATH` entry, no directory is listed.
 */
export function findExecutable(program: string, searchPath = process.env.PATH ?? ''): string | undefined {
  if (program.includes('/')) return isExecutable(program) ? program : undefined;
  for (const dir of searchPath.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, program);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}
