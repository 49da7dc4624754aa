import { packageTest } from '../../tools/config/vitest.ts';

export default packageTest({ name: 'function-length', testTimeout: 60_000 });
