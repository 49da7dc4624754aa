import { packageTest } from '@switchyard/config/vitest';

// The differential run drives ~100 Codex processes and sessions: one long test (see README).
export default packageTest({ name: 'codex-differential', testTimeout: 900_000 });
