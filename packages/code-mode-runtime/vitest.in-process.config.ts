import { packageTest } from '@switchyard/config/vitest';

// The same tests against `isolation: 'in-process'` (the default project runs them in worker
// processes); the tests of the worker processes themselves and of the protocol run once, there.
export default packageTest({
  name: 'code-mode-runtime/in-process',
  env: { SWITCHYARD_TEST_ISOLATION: 'in-process' },
  exclude: ['**/node_modules/**', 'src/process-runtime.test.ts', 'src/runtime-protocol.test.ts', 'src/remote-idempotency.test.ts', 'src/worker-pool.test.ts', 'src/admission-queue.test.ts'],
});
