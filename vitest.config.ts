import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*/vitest.config.ts', 'tools/*/vitest.config.ts'],
    pool: 'forks',
    execArgv: ['--no-node-snapshot'],
    maxWorkers: 2,
  },
});
