import { packageBuild } from '@switchyard/config/tsup';

export default [
  packageBuild(),
  packageBuild({ entry: ['src/bin.ts'], format: ['esm'], dts: false, clean: false }),
];
