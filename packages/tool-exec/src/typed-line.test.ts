import { describe, expect, test } from 'vitest';
import { EMPTY_LINE, typeInto, type TypedLine } from './typed-line';

function typeAll(...writes: string[]): { shown: string[]; refused: boolean[]; line: TypedLine } {
  let line = EMPTY_LINE;
  const shown: string[] = [];
  const refused: boolean[] = [];
  for (const chars of writes) {
    const typed = typeInto(line, chars);
    shown.push(typed.shown);
    refused.push(typed.submitsOpaque);
    if (!typed.submitsOpaque) line = typed.after;
  }
  return { shown, refused, line };
}

describe('typeInto', () => {
  test('a line split over writes is shown whole when it is submitted', () => {
    expect(typeAll('rm -r', 'f victim\n').shown).toEqual(['rm -r', 'rm -rf victim\n']);
  });

  test('backspace, DEL, ^U, ^W and ^C are applied', () => {
    expect(typeAll('rm -rX', '\bf victim\n').shown[1]).toBe('rm -rf victim\n');
    expect(typeAll('rm -rX\x7f', 'f v\n').shown[1]).toBe('rm -rf v\n');
    expect(typeAll('ls\x15rm -r', 'f v\n').shown[1]).toBe('rm -rf v\n');
    expect(typeAll('rm -rf junk\x17', 'victim\n').shown[1]).toBe('rm -rf victim\n');
    expect(typeAll('echo hi\x03', 'ls\n').shown[1]).toBe('ls\n');
  });

  test('a line edited with keys not followed is refused when submitted, until cleared', () => {
    const arrows = typeAll('rm -r victim', '\x1b[D\x1b[D', 'f\n');
    expect(arrows.refused).toEqual([false, false, true]);
    expect(typeAll('x\x01', '\x15', 'ls\n').refused).toEqual([false, false, true]);
    expect(typeAll('x\x01', '\x03', 'ls\n').refused).toEqual([false, false, false]);
    expect(typeAll('a\tb\n').refused).toEqual([false]);
  });
});
