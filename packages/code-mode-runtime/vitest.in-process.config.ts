import { packageTest } from '../../tools/config/vitest.ts';

// The same tests against `isolation: 'in-process'` (the default project runs them in worker processes).
export default packageTest({ name: 'code-mode-runtime/in-process', env: { SWITCHYARD_TEST_ISOLATION: 'in-process' } });
