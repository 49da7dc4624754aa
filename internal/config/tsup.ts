import { defineConfig, type Options } from 'tsup';

/** The one build config every published package uses: ESM + CJS + .d.ts from src/index.ts. */
export function packageBuild(overrides: Options = {}) {
  return defineConfig({
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: { compilerOptions: { customConditions: [] } },
    clean: true,
    sourcemap: true,
    target: 'node20',
    splitting: false,
    ...overrides,
  });
}
