import { packageBuild } from '@switchyard/config/tsup';

// The helper process is a second build: one self-contained ES module (jsdiff and the kit's message table bundled in), so a
// sandbox needs to show it only Node and this package's folder; both builds of the library start
// this one file. The kit is bundled from its source modules (the `@switchyard/source` condition),
// so only the message table the protocol uses comes in, nothing importing other packages. The
// two builds run side by side, so each cleans only its own files. `shims` gives the CommonJS
// build an `import.meta.url`.
export default [
  packageBuild({ entry: ['src/index.ts'], shims: true, clean: ['index.*'] }),
  packageBuild({ entry: ['src/apply-patch-helper.ts'], format: ['esm'], noExternal: ['diff', '@switchyard/kit'], esbuildOptions: (options) => void (options.conditions = ['@switchyard/source']), dts: false, clean: ['apply-patch-helper.*'] }),
];
