// The README's schema patterns are code a plugin author pastes: every `ts` block of its
// "## Schema patterns" section is compiled, as a module of its own, with the TypeScript compiler
// API against the built package (dist/*.d.ts, reached through the package's own `exports`, as an
// installed copy is), strict. A block that does not compile fails with its README line.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const KIT = fileURLToPath(new URL('..', import.meta.url));
const ROOT = join(KIT, '../..');
const SECTION = '## Schema patterns';

/** One fenced `ts` block: `line` is the README line (1-based) of its first code line. */
interface Block {
  line: number;
  code: string;
}

/** The `ts` blocks between `heading` and the next `## ` heading. */
function sectionBlocks(markdown: string, heading: string): Block[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`README.md has no "${heading}" section`);
  const blocks: Block[] = [];
  for (let i = start + 1; i < lines.length && !lines[i].startsWith('## '); i++) {
    if (lines[i].trim() !== '```ts') continue;
    let end = i + 1;
    while (end < lines.length && lines[end].trim() !== '```') end++;
    blocks.push({ line: i + 2, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts'],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  types: ['node'],
  typeRoots: [join(ROOT, 'node_modules/@types')],
  skipLibCheck: true,
};

/**
 * Compiles each block as a module inside the package folder (so `@switchyard/kit` resolves through
 * the package's own `exports` to dist/, without the workspace's source condition); answers one
 * `README.md:line:column: message` per diagnostic, and the declaration files the program read.
 */
function compileBlocks(blocks: Block[]): { problems: string[]; files: string[] } {
  const sources = new Map(blocks.map((block) => [join(KIT, `readme-block-${block.line}.ts`), block]));
  const host = ts.createCompilerHost(OPTIONS);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (name) => sources.has(name) || fileExists.call(host, name);
  host.readFile = (name) => sources.get(name)?.code ?? readFile.call(host, name);
  host.getSourceFile = (name, language, ...rest) => {
    const block = sources.get(name);
    return block ? ts.createSourceFile(name, block.code, language, true) : getSourceFile.call(host, name, language, ...rest);
  };
  const program = ts.createProgram([...sources.keys()], OPTIONS, host);
  const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    const block = diagnostic.file && sources.get(diagnostic.file.fileName);
    if (!diagnostic.file || diagnostic.start === undefined) return text;
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return block ? `README.md:${block.line + line}:${character + 1}: ${text}` : `${diagnostic.file.fileName}:${line + 1}: ${text}`;
  });
  return { problems, files: program.getSourceFiles().map((file) => file.fileName) };
}

describe('the README schema patterns', () => {
  it('compile against the built package, every block of the section', () => {
    expect(existsSync(join(KIT, 'dist/index.d.ts')), 'build the kit first (pnpm run build)').toBe(true);
    const blocks = sectionBlocks(readFileSync(join(KIT, 'README.md'), 'utf8'), SECTION);
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const { problems, files } = compileBlocks(blocks);
    expect(problems).toEqual([]);
    // the built declarations were what the blocks compiled against, not the sources
    expect(files).toContain(join(KIT, 'dist/index.d.ts'));
    expect(files.some((file) => file.startsWith(join(KIT, 'src/')))).toBe(false);
  }, 120_000);

  it('fail a block that does not compile, naming its README line', () => {
    const markdown = [
      '# x',
      SECTION,
      '',
      '```ts',
      "import { defineFunctionTool } from '@switchyard/kit';",
      'export const t = defineFunctionTool({',
      "  name: 't', description: 'T.',",
      "  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },",
      '  handle: ({ args }) => { const n: number = args.city; return n; },',
      '});',
      '```',
      '## Next',
      '```ts',
      'this block is outside the section',
      '```',
    ].join('\n');
    const blocks = sectionBlocks(markdown, SECTION);
    expect(blocks).toHaveLength(1);
    expect(compileBlocks(blocks).problems).toEqual(["README.md:9:33: Type 'string' is not assignable to type 'number'."]);
  }, 120_000);
});
