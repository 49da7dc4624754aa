import { packageBuild } from '@switchyard/config/tsup';

// Node 22+, as ai 7 itself.
export default packageBuild({ target: 'node22' });
