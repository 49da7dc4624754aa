import { packageTest } from '../../tools/config/vitest.ts';

// The differential run drives ~100 Codex processes and sessions: one long test (see README).
export default packageTest({ name: 'codex-differential', testTimeout: 900_000 });
