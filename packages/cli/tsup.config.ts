import { packageBuild } from '../../tools/config/tsup.ts';

export default [
  packageBuild(),
  packageBuild({ entry: ['src/bin.ts'], format: ['esm'], dts: false, clean: false }),
];
