import { packageBuild } from '../../tools/config/tsup.ts';

// Node 22+, as ai 7 itself.
export default packageBuild({ target: 'node22' });
