import { packageBuild } from '@switchyard/config/tsup';

export default packageBuild({ entry: { index: 'src/index.ts', 'testing/index': 'src/testing/index.ts' } });
