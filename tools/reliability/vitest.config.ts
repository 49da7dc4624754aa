import { packageTest } from '../../tools/config/vitest';

export default packageTest({ name: 'reliability' });
