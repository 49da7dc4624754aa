import { packageBuild } from '@switchyard/config/tsup';

// The worker entry ships beside the package entry (dist/worker.js); shims give the CJS build an
// import.meta.url to find it.
export default packageBuild({ entry: ['src/index.ts', 'src/worker.ts'], shims: true });
