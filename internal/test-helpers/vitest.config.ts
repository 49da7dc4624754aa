import { packageTest } from '@switchyard/config/vitest';

export default packageTest({ name: 'test-helpers', include: ['*.test.ts'] });
