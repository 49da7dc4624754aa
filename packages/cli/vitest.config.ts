import { packageTest } from '@switchyard/config/vitest';

// Generous: each test starts the built binary, whose cells run in a worker process it starts too.
export default packageTest({ name: 'cli', testTimeout: 60_000 });
