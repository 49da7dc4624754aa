import { chmodSync, cpSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { build } from 'esbuild';

/** Resolves packages the way `@switchyard/tool-exec` does (node-pty is its optional dependency). */
const fromToolExec = createRequire(createRequire(import.meta.url).resolve('@switchyard/tool-exec/package.json'));

/**
 * Bundles a child-process entry (TypeScript sources included) into one world-readable file, so
 * that a run as an unprivileged user (`setpriv --reuid=65534`) needs read access to that file
 * only, not to this checkout, which may live where that user cannot look (a clone in a 0700
 * `mktemp -d` folder). node-pty (native, left out of the bundle) and its platform package are
 * copied beside it — a symlink into the checkout would need that access again — so tty commands
 * start from the bundle too.
 */
export async function bundleEntry(entry: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), `${basename(entry, '.ts')}-bundle-`));
  chmodSync(dir, 0o755);
  const outfile = join(dir, 'entry.mjs');
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    conditions: ['@switchyard/source'],
    external: ['@lydell/node-pty'],
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'silent',
  });
  chmodSync(outfile, 0o644);
  const pty = dirname(fromToolExec.resolve('@lydell/node-pty/package.json'));
  const platformName = `@lydell/node-pty-${process.platform}-${process.arch}`;
  const platform = dirname(createRequire(join(pty, 'package.json')).resolve(`${platformName}/package.json`));
  mkdirSync(join(dir, 'node_modules', '@lydell'), { recursive: true, mode: 0o755 });
  chmodSync(join(dir, 'node_modules'), 0o755);
  cpSync(pty, join(dir, 'node_modules', '@lydell', 'node-pty'), { recursive: true, dereference: true });
  cpSync(platform, join(dir, 'node_modules', platformName), { recursive: true, dereference: true });
  return outfile;
}
