import { packageBuild } from '@switchyard/config/tsup';

// The helper process is a second build: one self-contained ES module (jsdiff bundled in), so a
// sandbox needs to show it only Node and this package's folder; both builds of the library start
// this one file. The two builds run side by side, so each cleans only its own files. `shims`
// gives the CommonJS build an `import.meta.url`.
export default [
  packageBuild({ entry: ['src/index.ts'], shims: true, clean: ['index.*'] }),
  packageBuild({ entry: ['src/apply-patch-helper.ts'], format: ['esm'], noExternal: ['diff'], dts: false, clean: ['apply-patch-helper.*'] }),
];
