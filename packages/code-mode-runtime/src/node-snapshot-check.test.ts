import { expect, it } from 'vitest';
import { createCodeModeRuntime } from './code-mode-runtime';
import { nodeSnapshotFlagProblem } from './node-snapshot-check';

it('finds the flag in execArgv or NODE_OPTIONS, and explains its absence on Node >= 20', () => {
  expect(nodeSnapshotFlagProblem({ execArgv: ['--no-node-snapshot'], nodeOptions: '', nodeVersion: '20.20.2' })).toBeUndefined();
  expect(nodeSnapshotFlagProblem({ execArgv: [], nodeOptions: '--max-old-space-size=512 --no-node-snapshot', nodeVersion: '20.20.2' })).toBeUndefined();
  expect(nodeSnapshotFlagProblem({ execArgv: [], nodeOptions: '', nodeVersion: '18.19.0' })).toBeUndefined();
  const problem = nodeSnapshotFlagProblem({ execArgv: ['--expose-gc'], nodeOptions: '', nodeVersion: '20.20.2' });
  expect(problem).toContain('without --no-node-snapshot');
  expect(problem).toContain('NODE_OPTIONS=--no-node-snapshot');
});

it('this test process runs with the flag, so a strict runtime starts without a warning', () => {
  expect(nodeSnapshotFlagProblem()).toBeUndefined();
  expect(() => createCodeModeRuntime({ nodeSnapshotCheck: 'throw' })).not.toThrow();
});
