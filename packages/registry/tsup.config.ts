import { packageBuild } from '@switchyard/config/tsup';

// The testing entry is ESM only: it imports vitest, which ships no CommonJS build.
export default [packageBuild(), packageBuild({ entry: { 'testing/index': 'src/testing/index.ts' }, format: ['esm'], clean: false })];
