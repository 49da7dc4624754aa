import { describe, expect, it } from 'vitest';
import { executorProtocolProblem, isCompatibleProtocolVersion } from './compatibility';
import type { ToolExecutor } from './executor';
import { toolName } from './tool-name';
import { VERSION } from './version';

const executorAt = (protocolVersion?: unknown): ToolExecutor =>
  ({ name: toolName('query', 'sql'), spec: { type: 'function', name: 'query', description: '', parameters: {} }, handle: () => '', protocolVersion }) as unknown as ToolExecutor;

describe('isCompatibleProtocolVersion', () => {
  it('reads 0.x minors as contract lines of their own and 1.x majors as lines that grow', () => {
    expect(isCompatibleProtocolVersion('0.1.0', '0.1.7')).toBe(true);
    expect(isCompatibleProtocolVersion('0.1.9', '0.1.0')).toBe(true);
    expect(isCompatibleProtocolVersion('0.1.0', '0.2.0')).toBe(false);
    expect(isCompatibleProtocolVersion('0.2.0', '0.1.0')).toBe(false);
    expect(isCompatibleProtocolVersion('1.2.0', '1.3.1')).toBe(true);
    expect(isCompatibleProtocolVersion('1.3.0', '1.2.0')).toBe(false);
    expect(isCompatibleProtocolVersion('1.0.0', '2.0.0')).toBe(false);
    expect(isCompatibleProtocolVersion('0.1.0-next.1', '0.1.0')).toBe(true);
    expect(isCompatibleProtocolVersion('latest', '0.1.0')).toBe(false);
    expect(isCompatibleProtocolVersion(VERSION)).toBe(true);
  });
});

describe('executorProtocolProblem', () => {
  it('accepts an unstamped executor and one of the same line', () => {
    expect(executorProtocolProblem(executorAt())).toBeUndefined();
    expect(executorProtocolProblem(executorAt(VERSION))).toBeUndefined();
    expect(executorProtocolProblem(executorAt('0.1.3'), '0.1.0')).toBeUndefined();
  });

  it('names both versions and the range to install for another line', () => {
    expect(executorProtocolProblem(executorAt('0.2.0'), '0.1.0')).toBe(
      'tool sql__query was built against @switchyard/protocol 0.2.0, and this host runs @switchyard/protocol 0.1.0; ' +
        'they do not share a contract: install a release of the plugin built for ^0.1.0 (its peer range must admit 0.1.0)',
    );
    expect(executorProtocolProblem(executorAt(7), '1.4.2')).toContain('built against @switchyard/protocol 7, and this host runs @switchyard/protocol 1.4.2');
    expect(executorProtocolProblem(executorAt(7), '1.4.2')).toContain('built for ^1.4.0');
  });
});
