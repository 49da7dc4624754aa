import { packageBuild } from '../../tools/config/tsup';

export default [
  packageBuild(),
  packageBuild({ entry: ['src/bin.ts'], format: ['esm'], dts: false, clean: false }),
];
