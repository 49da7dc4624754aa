/**
 * No program of another language hides in a string: a shipped source file of a package
 * (`packages/<name>/src`, tests, `test-support.*` and `*.generated.*` files aside) holds no string
 * literal longer than {@link MAX_LINES} lines, except the texts listed in {@link ALLOWED}, each with
 * the reason it is not such a program. A program of another language lives in a file of its own
 * (`packages/sandbox/src/perl/*.pl`, `session/src/sql/schema.sql`, `tool-apply-patch/src/grammar/apply-patch.lark`, bundled at build time by `@switchyard/config/embed`), where it can be read, linted and
 * tested as what it is.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { shippedSources } from './sources';

/** Generated files hold what they were generated from (a bundle, a program read at build time). */
const GENERATED = /\.generated\.[cm]?[jt]sx?$/;

/** The longest literal allowed anywhere, in lines. */
export const MAX_LINES = 5;

/** Longer literals that are not programs of another language: `<file>` and how the text starts, with why. */
export const ALLOWED: ReadonlyArray<{ file: string; startsWith: string; why: string }> = [
  { file: 'packages/cli/src/cli.ts', startsWith: 'Usage: switchyard', why: 'the usage text (prose)' },
  { file: 'packages/cli/src/demo-command.ts', startsWith: '// @exec:', why: 'a Code Mode cell the demo plays as the model: JavaScript, the language Code Mode runs' },
  { file: 'packages/code-mode/src/description.ts', startsWith: 'Run JavaScript to call tools.', why: 'the tool description the model reads (prose)' },
  { file: 'packages/code-mode/src/description.ts', startsWith: 'Waits on a yielded', why: 'the tool description the model reads (prose)' },
  { file: 'packages/code-mode/src/description.ts', startsWith: 'Shared MCP Types:', why: 'type declarations the model reads' },
  { file: 'packages/kit/src/message-table.ts', startsWith: 'return function check', why: 'JavaScript generated for V8, the host’s own language' },
  { file: 'packages/kit/src/message-table.ts', startsWith: 'case ${JSON.stringify(t)}', why: 'JavaScript generated for V8 (one case of a validator), the host’s own language' },
  { file: 'packages/session/src/discovery.ts', startsWith: '<tools_found>', why: 'the tool_search answer frame the model reads (prose)' },
  { file: 'packages/code-mode-runtime/src/type-stripper.ts', startsWith: "\nconst { parentPort, workerData } = require('node:worker_threads');", why: 'JavaScript of an eval worker, the host’s own language' },
];

/** One literal over the limit: where it is, its length and its first line. */
export interface LongLiteral {
  file: string;
  line: number;
  lines: number;
  start: string;
}

/** Every string or template literal over {@link MAX_LINES} lines in one source text (a template's text with its `${…}` as written). */
export function longLiterals(text: string, file: string): LongLiteral[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: LongLiteral[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) {
      const value = ts.isTemplateExpression(node) ? node.getText(source).slice(1, -1) : node.text;
      // a template's `\n` escapes count as the line breaks they write, as a string's do (its text is cooked)
      const lines = Math.max(value.split('\n').length, ts.isTemplateExpression(node) ? value.split('\\n').length : 0);
      if (lines > MAX_LINES) found.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, lines, start: value });
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The literals of `repo`'s packages over the limit and not allowed, and the allowed entries that match nothing (stale). */
export function findEmbeddedPrograms(repo: string): { long: LongLiteral[]; stale: string[] } {
  const packages = join(repo, 'packages');
  const long: LongLiteral[] = [];
  const used = new Set<number>();
  for (const name of readdirSync(packages)) {
    for (const path of shippedSources(join(packages, name)).filter((source) => !GENERATED.test(source))) {
      const file = relative(repo, path);
      for (const literal of longLiterals(readFileSync(path, 'utf8'), file)) {
        const allowed = ALLOWED.findIndex((entry) => entry.file === file && literal.start.startsWith(entry.startsWith));
        if (allowed >= 0) used.add(allowed);
        else long.push({ ...literal, start: literal.start.split('\n')[0] ?? '' });
      }
    }
  }
  const stale = ALLOWED.filter((_entry, index) => !used.has(index)).map((entry) => `${entry.file}: ${entry.startsWith.trim()}`);
  return { long, stale };
}
