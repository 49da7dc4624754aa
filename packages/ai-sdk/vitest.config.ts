import { packageTest } from '@switchyard/config/vitest';

export default packageTest({ name: 'ai-sdk' });
