import { defineProject } from 'vitest/config';

/** The one test config every package uses: source condition, forked workers with --no-node-snapshot. */
export function packageTest(options: { name: string; testTimeout?: number; include?: string[]; exclude?: string[]; env?: Record<string, string> }) {
  const conditions = ['@switchyard/source', 'node', 'import', 'module', 'default'];
  return defineProject({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ['@switchyard/source'] } },
    test: {
      name: options.name,
      include: options.include ?? ['src/**/*.test.ts', 'test/**/*.test.ts'],
      exclude: options.exclude ?? ['**/node_modules/**'],
      pool: 'forks',
      execArgv: ['--no-node-snapshot'],
      testTimeout: options.testTimeout ?? 20_000,
      env: options.env,
      hookTimeout: 20_000,
    },
  });
}
