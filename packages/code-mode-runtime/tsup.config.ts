import { packageBuild } from '@switchyard/config/tsup';

// Three entries: the host's (dist/index.js), the runtime protocol's (dist/protocol/index.js) and the
// worker process's (dist/worker.js). Splitting puts the code they share in chunks, so the two public
// entries hold one copy of each class and of the shared worker pool (`instanceof RuntimeLostError`
// holds whichever entry made the error). Shims give the CJS build an import.meta.url to find the
// worker.
export default packageBuild({ entry: { index: 'src/index.ts', 'protocol/index': 'src/protocol-entry.ts', worker: 'src/worker.ts' }, shims: true, splitting: true });
