import { describe, expect, it, vi } from 'vitest';
import {
  FatalToolError,
  RespondToModelError,
  SwitchyardError,
  errorMessage,
  formatToolError,
  hasErrorCode,
  isFatalError,
  isSwitchyardError,
} from './errors';

describe('errors', () => {
  it('carries stable codes and the fatal disposition', () => {
    const respond = new RespondToModelError('query must not be empty');
    expect(respond.code).toBe('RESPOND_TO_MODEL');
    expect(respond.fatal).toBe(false);
    expect(formatToolError(respond)).toBe('query must not be empty');
    const fatal = new FatalToolError('failed to read current time: boom');
    expect(fatal.code).toBe('FATAL');
    expect(isFatalError(fatal)).toBe(true);
    expect(formatToolError(fatal)).toBe('Fatal error: failed to read current time: boom');
    // a call of the wrong payload kind is answered `aborted`; the turn goes on
    expect(new SwitchyardError('INCOMPATIBLE_PAYLOAD', 'x').fatal).toBe(false);
    expect(new SwitchyardError('INTERNAL', 'x').fatal).toBe(true);
    expect(hasErrorCode(new RespondToModelError('bad', { code: 'INVALID_INPUT' }), 'INVALID_INPUT')).toBe(true);
    const cause = new Error('root');
    expect(new FatalToolError('wrapped', { cause }).cause).toBe(cause);
  });

  it('recognizes errors from a second copy of the module, which instanceof does not', async () => {
    vi.resetModules();
    const path = './errors?second-copy';
    const other = (await import(/* @vite-ignore */ path)) as typeof import('./errors');
    expect(other.SwitchyardError).not.toBe(SwitchyardError);
    const foreign = new other.FatalToolError('from a plugin copy');
    expect(foreign instanceof SwitchyardError).toBe(false);
    expect(isSwitchyardError(foreign)).toBe(true);
    expect(isFatalError(foreign)).toBe(true);
    expect(other.isSwitchyardError(new RespondToModelError('mine'))).toBe(true);
  });

  it('never throws on odd values', () => {
    expect(isSwitchyardError(null)).toBe(false);
    expect(isSwitchyardError('FATAL')).toBe(false);
    expect(isSwitchyardError({ code: 'FATAL' })).toBe(false);
    const hostile = new Proxy({}, { get() { throw new Error('trap'); } });
    expect(isSwitchyardError(hostile)).toBe(false);
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage({ message: 'plain object' })).toBe('plain object');
  });
});
