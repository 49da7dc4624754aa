// Which workspace folders run on this Node: a package whose `engines.node` excludes the running
// Node is left out at the project level (vitest does not load it, the examples runner skips it),
// and the matrix's other pass runs it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

/** `engines.node` of the package in `dir` when it excludes the running Node, else undefined. */
export function unmetNodeRange(dir) {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) return undefined;
  const range = JSON.parse(readFileSync(file, 'utf8')).engines?.node;
  return range && !semver.satisfies(process.version, range) ? range : undefined;
}
