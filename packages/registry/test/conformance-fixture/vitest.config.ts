import { packageTest } from '@switchyard/config/vitest';

export default packageTest({ name: 'registry-conformance-fixture', include: ['**/*.fixture.ts'] });
