import { packageBuild } from '../../tools/config/tsup.ts';

export default packageBuild({ entry: { index: 'src/index.ts', 'testing/index': 'src/testing/index.ts' } });
