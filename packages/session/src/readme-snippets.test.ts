import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The README's `ts` blocks are type-checked against the package sources, as a host would write
// them in an ES module. A block preceded by `<!-- not type-checked: … -->` is left out.

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');

function snippets(markdown: string): string[] {
  const blocks: string[] = [];
  const pattern = /(<!--\s*not type-checked[^>]*-->\s*\n)?```ts\n([\s\S]*?)```/g;
  for (let match = pattern.exec(markdown); match; match = pattern.exec(markdown)) {
    if (!match[1]) blocks.push(match[2]);
  }
  return blocks;
}

function diagnostics(sources: readonly string[]): string[] {
  const configPath = join(packageDir, 'tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (!config) throw new Error('cannot read tsconfig.json');
  const files = new Map(sources.map((source, index) => [join(packageDir, 'src', `readme-snippet-${index}.ts`), `${source}\nexport {};\n`]));
  const host = ts.createCompilerHost({ ...config.options, noEmit: true });
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, onError, create) => {
    const text = files.get(fileName);
    return text !== undefined ? ts.createSourceFile(fileName, text, language) : getSourceFile(fileName, language, onError, create);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => files.has(fileName) || fileExists(fileName);
  const program = ts.createProgram([...files.keys()], { ...config.options, noEmit: true, noUnusedLocals: false }, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file && files.has(diagnostic.file.fileName))
    .map((diagnostic) => {
      const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      return `${diagnostic.file!.fileName.split('/').pop()}:${line + 1}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    });
}

describe('README snippets', () => {
  it('every ts block type-checks', () => {
    const blocks = snippets(readme);
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    expect(diagnostics(blocks)).toEqual([]);
  }, 120_000);

  it('a wrong snippet is caught', () => {
    expect(diagnostics([`import { createSession } from '@switchyard/session';\ncreateSession({ tools: [], toolMode: 'codemode' });`])).toEqual([
      expect.stringContaining(`readme-snippet-0.ts:2: Type '"codemode"' is not assignable to type`),
    ]);
  }, 120_000);
});
