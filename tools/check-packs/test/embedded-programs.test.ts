import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findEmbeddedPrograms, longLiterals } from '../src/embedded-programs';
import { fixtureTree } from './fixture-tree';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('no program of another language in a string', () => {
  it('holds in this repository: no literal over 5 lines in packages/*/src but the allowed texts, and no allowed entry is stale', () => {
    expect(findEmbeddedPrograms(repo)).toEqual({ long: [], stale: [] });
  });

  it('finds a perl program in a String.raw template, a long string and a long template, not a 5-line one', () => {
    const perl = 'export const P = String.raw`\nmy $x = shift @ARGV;\nsyscall(157, 1, 9, 0, 0, 0);\nexit 0;\n${"sub x {}"}\n1;\n`;';
    expect(longLiterals(perl, 'p.ts')).toEqual([{ file: 'p.ts', line: 1, lines: 7, start: '\nmy $x = shift @ARGV;\nsyscall(157, 1, 9, 0, 0, 0);\nexit 0;\n${"sub x {}"}\n1;\n' }]);
    expect(longLiterals("const s = 'a\\nb\\nc\\nd\\ne\\nf';", 's.ts').map((found) => found.lines)).toEqual([6]);
    expect(longLiterals('const t = `a\nb\nc\nd\ne`;', 't.ts')).toEqual([]);
    // line breaks written as escapes in a template count too
    expect(longLiterals('const u = `${a}\\n1\\n2\\n3\\n4\\n5`;', 'u.ts').map((found) => found.lines)).toEqual([6]);
  });

  describe('on a package that breaks it', () => {
    const { root, write: file } = fixtureTree('embedded');
    file('packages/sandbox/src/launcher.ts', 'export const L = `#!/bin/sh\nset -e\ncd "$1"\nshift\nexec "$@"\n`;\n');
    file('packages/sandbox/src/launcher.test.ts', 'const fixture = `a\nb\nc\nd\ne\nf\ng`;\n');
    file('packages/sandbox/src/perl/programs.generated.ts', 'export const P = `a\nb\nc\nd\ne\nf\ng`;\n');

    it('names the file, the line and the first line of the program; tests and generated files aside', () => {
      const { long, stale } = findEmbeddedPrograms(root);
      expect(long).toEqual([{ file: 'packages/sandbox/src/launcher.ts', line: 1, lines: 6, start: '#!/bin/sh' }]);
      // every allowed entry of this repository is stale there
      expect(stale.length).toBeGreaterThan(0);
    });
  });
});
