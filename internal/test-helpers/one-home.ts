import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * The rule this module checks: a test helper has one home. A function declared at the top level of
 * a test file (a `*.test.ts`, anything under a `test/` folder, a `test-support.ts`, a package's
 * `src/testing/` entry, this package or `internal/config`, whose process checks the tests share)
 * is declared in no other such file; a second test that needs
 * it imports it. Two helpers that do different things take names that say the difference.
 *
 * Example packages (`examples/`) are left out: each is a template a plugin author copies whole, so
 * it must not import the workspace's private helpers.
 */
const TEST_FILE = /(^|\/)(test|tests|testing)\/|\.test\.m?tsx?$|(^|\/)test-support\.m?ts$|^internal\/(test-helpers|config)\//;
const SOURCE = /\.(m|c)?tsx?$/;

export function isTestFile(path: string): boolean {
  return SOURCE.test(path) && !path.endsWith('.d.ts') && !path.startsWith('examples/') && TEST_FILE.test(path);
}

function functionLike(node: ts.Expression | undefined): boolean {
  let inner = node;
  while (inner && (ts.isParenthesizedExpression(inner) || ts.isAsExpression(inner) || ts.isSatisfiesExpression(inner))) inner = inner.expression;
  return inner !== undefined && (ts.isArrowFunction(inner) || ts.isFunctionExpression(inner));
}

/** The names of the functions a file declares at its top level (`function f`, `const f = () =>`). */
export function topLevelHelpers(source: string, fileName = 'file.ts'): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const names: string[] = [];
  for (const statement of file.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name) names.push(statement.name.text);
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      if (ts.isIdentifier(declaration.name) && functionLike(declaration.initializer)) names.push(declaration.name.text);
    }
  }
  return [...new Set(names)];
}

/** Each helper name declared in more than one of `files` (path → source), with its files. */
export function helpersWithManyHomes(files: Map<string, string>): Map<string, string[]> {
  const homes = new Map<string, string[]>();
  for (const [path, source] of files) {
    for (const name of topLevelHelpers(source, path)) homes.set(name, [...(homes.get(name) ?? []), path]);
  }
  return new Map([...homes].filter(([, paths]) => paths.length > 1).sort(([a], [b]) => a.localeCompare(b)));
}

/** The test files git tracks in the repository at `root`, read. */
export function trackedTestFiles(root: string): Map<string, string> {
  const listed = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const paths = listed.split('\0').filter((path) => path !== '' && isTestFile(path));
  return new Map(paths.map((path) => [path, readFileSync(join(root, path), 'utf8')]));
}
