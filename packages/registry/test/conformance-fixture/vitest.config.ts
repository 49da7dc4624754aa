import { packageTest } from '../../../../tools/config/vitest.ts';

export default packageTest({ name: 'registry-conformance-fixture', include: ['**/*.fixture.ts'] });
