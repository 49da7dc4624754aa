import { packageTest } from '../../tools/config/vitest.ts';

export default packageTest({ name: 'code-mode-nats', testTimeout: 120_000 });
