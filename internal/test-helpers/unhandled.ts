import { afterAll, beforeAll } from 'vitest';

/** Call at the top of a test file: the reasons of the promise rejections nobody handled while its tests ran (a test expects it empty). */
export function collectUnhandledRejections(): unknown[] {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  beforeAll(() => void process.on('unhandledRejection', onUnhandled));
  afterAll(() => void process.off('unhandledRejection', onUnhandled));
  return unhandled;
}
