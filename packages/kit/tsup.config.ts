import { packageBuild } from '@switchyard/config/tsup';

// Two entries, each ESM + CJS with its declarations: the root and `@switchyard/kit/internal`.
export default packageBuild({ entry: { index: 'src/index.ts', internal: 'src/internal.ts' } });
