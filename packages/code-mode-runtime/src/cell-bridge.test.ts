import { describe, expect, it } from 'vitest';
import { decodeCellMessage } from './cell-bridge';

describe('decodeCellMessage (the runtime checks what an isolate posts)', () => {
  it('accepts each well-formed message as its typed tuple', () => {
    expect(decodeCellMessage('text', 'a', undefined, undefined)).toEqual(['text', 'a']);
    expect(decodeCellMessage('notify', 'n', undefined, undefined)).toEqual(['notify', 'n']);
    expect(decodeCellMessage('image', 'DATA:image/png;base64,AA', 'low', undefined)).toEqual(['image', 'DATA:image/png;base64,AA', 'low']);
    expect(decodeCellMessage('yield', undefined, undefined, undefined)).toEqual(['yield']);
    expect(decodeCellMessage('calls', ['tool-1', 'echo', '{}'], undefined, undefined)).toEqual(['calls', ['tool-1', 'echo', '{}']]);
    expect(decodeCellMessage('set-timer', 1, 50, undefined)).toEqual(['set-timer', 1, 50]);
    expect(decodeCellMessage('clear-timer', 1, undefined, undefined)).toEqual(['clear-timer', 1]);
    expect(decodeCellMessage('write', 'k', '1', undefined)).toEqual(['write', 'k', '1']);
    expect(decodeCellMessage('done', 1, 'boom', 2)).toEqual(['done', 1, 'boom', 2]);
    expect(decodeCellMessage('done', 'yes', '', 0)).toEqual(['done', 0, '', 0]);
  });

  it('drops anything malformed (a subverted isolate): wrong kinds, types, image URLs and details, call batches', () => {
    for (const [kind, a, b, c] of [
      ['shell', 'rm -rf /', undefined, undefined],
      ['text', 5, undefined, undefined],
      ['image', 'https://example.com/a.png', 'high', undefined],
      ['image', 'data:image/png;base64,AA', 'huge', undefined],
      ['calls', ['tool-1', 'echo'], undefined, undefined],
      ['calls', ['tool-1', 'echo', { toString: () => '{}' }], undefined, undefined],
      ['calls', 'tool-1,echo,{}', undefined, undefined],
      ['set-timer', '1', 50, undefined],
      ['write', 'k', 1, undefined],
      ['done', 0, undefined, 0],
      [{ toString: () => 'text' }, 'a', undefined, undefined],
    ] as Array<[unknown, unknown, unknown, unknown]>) {
      expect(decodeCellMessage(kind, a, b, c)).toBeUndefined();
    }
  });
});
