import { packageTest } from '@switchyard/config/vitest';

export default packageTest({ name: 'function-length', testTimeout: 60_000 });
