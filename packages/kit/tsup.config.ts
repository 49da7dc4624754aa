import { packageBuild } from '@switchyard/config/tsup';

// Two entries, each ESM + CJS with its declarations: the root and `@switchyard/kit/internal`.
// Splitting puts the sources they share (define, the output classes, truncation...) in chunks, so
// both entries hold one copy of each class (`instanceof FunctionToolOutput` holds whichever entry
// made the output).
export default packageBuild({ entry: { index: 'src/index.ts', internal: 'src/internal.ts' }, splitting: true, keepNames: true });
