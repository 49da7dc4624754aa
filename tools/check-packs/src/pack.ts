/**
 * `npm run pack`: every published package as a tarball in `packs/` (or the folder given), and
 * `packs/INSTALL.md` with one `npm install` line per host shape that an app anywhere on this machine
 * runs as is (the Switchyard tarballs it needs by absolute path, third-party packages from the
 * registry). The pack check runs these same lines (src/host-shapes.ts).
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { HOST_SHAPES, installArgs, isolatedVmSpec, packAll, root } from './packs.ts';

const dest = resolve(root, process.argv[2] ?? 'packs');
mkdirSync(dest, { recursive: true });
for (const file of readdirSync(dest).filter((name) => name.endsWith('.tgz'))) rmSync(join(dest, file));
const tarballOf = packAll(dest);

const lines = [
  '# Installing Switchyard from these tarballs',
  '',
  'Run one line in your app (any folder outside this repository). Code Mode shapes: on Node 24+',
  `\`${isolatedVmSpec(24)}\` installs the registry's latest (7.x); on Node 22 write \`${isolatedVmSpec(22)}\` instead.`,
  '',
];
for (const shape of HOST_SHAPES) {
  lines.push(`## ${shape.name}: ${shape.what}`, '', '```sh', `npm install ${installArgs(shape, tarballOf, 24).join(' ')}`, '```', '');
}
writeFileSync(join(dest, 'INSTALL.md'), lines.join('\n'));
console.log(`pack: ${tarballOf.size} tarballs in ${dest}; install lines per host shape in ${join(dest, 'INSTALL.md')}:\n`);
for (const shape of HOST_SHAPES) console.log(`${shape.name}:\n  npm install ${installArgs(shape, tarballOf, 24).join(' ')}\n`);
