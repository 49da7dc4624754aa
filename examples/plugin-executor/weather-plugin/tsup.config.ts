import { defineConfig } from 'tsup';

// The build every Switchyard package uses (ESM + CJS + a .d.ts for each, Node 20 syntax), written
// out so a copy of this folder needs nothing from the monorepo. `removeNodeProtocol: false` keeps
// `node:` specifiers as written: tsup 8 strips the prefix by default, and `node:sqlite` or
// `node:test` exist only with it.
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  splitting: false,
  removeNodeProtocol: false,
});
