import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { packageSources } from './function-length.ts';
import { longTexts } from './long-texts.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * The long texts that stay in TypeScript, each with what it is: prose the model or a user reads, or
 * JavaScript (the language of the package itself and of Code Mode cells). A program of another
 * language does not belong here: it moves to its own file (`.pl`, `.sql`, `.lark`).
 */
const KEPT: Record<string, string> = {
  'packages/cli/src/cli.ts': 'prose: the usage text',
  'packages/cli/src/demo-command.ts': 'JavaScript: the demo cell the scripted model sends to exec',
  'packages/code-mode/src/description.ts': "prose: the exec and wait descriptions the model reads, with the TypeScript shapes of the cell's tools",
  'packages/code-mode-runtime/src/type-stripper.ts': "JavaScript: the type stripper worker's source",
  'packages/kit/src/message-table.ts': 'JavaScript: validators generated from a message table, compiled once',
  'packages/session/src/discovery.ts': 'prose: the tool_search answer frame the model reads',
};

describe('texts of another language live in their own files', () => {
  it('finds literals, templates and escaped line breaks over five lines', () => {
    const text = ['const a = `1\n2\n3\n4\n5\n6`;', "const b = 'x\\ny\\nz\\nw\\nv\\nu';", 'const c = `1\n2\n3\n4\n5`;', 'f(`${a}\n\n\n\n\n`);'].join('\n');
    expect(longTexts('a.ts', text)).toEqual([
      { file: 'a.ts', line: 1, lines: 6 },
      { file: 'a.ts', line: 7, lines: 6 },
      { file: 'a.ts', line: 13, lines: 6 },
    ]);
  });

  it('no source file in packages/*/src holds a long text other than the kept prose and JavaScript', () => {
    const found = packageSources(root)
      .filter(({ file }) => !file.endsWith('.generated.ts'))
      .flatMap(({ file, text }) => longTexts(file, text));
    const files = [...new Set(found.map(({ file }) => file))].sort();
    expect(files.filter((file) => !(file in KEPT))).toEqual([]);
    // a kept entry whose text is gone is dropped from the list
    expect(Object.keys(KEPT).filter((file) => !files.includes(file))).toEqual([]);
  });
});
