import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** Longest a function may be without a justification comment. */
export const MAX_FUNCTION_LINES = 80;

/**
 * The marker of a justification: a comment directly above the function (or above the statement or
 * property that holds it) reading `// long-function: <why it reads better whole>`. The reason must
 * not be empty.
 */
export const LONG_FUNCTION_MARKER = 'long-function:';
const MARKER_WITH_REASON = /long-function:\s*\S/;

export interface FunctionLength {
  /** Path relative to the scanned root, with forward slashes. */
  file: string;
  /** Name path of the function, outermost first, e.g. `createExecToolset > execCommand.handle`. */
  name: string;
  /** 1-based line of the function's first token. */
  line: number;
  /** Lines from the first token to the closing token, both included. */
  lines: number;
  /** The text after the marker when the function carries a justification comment. */
  justification?: string;
}

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.FunctionExpression
  | ts.ArrowFunction
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration;

function isFunctionNode(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

function propertyNameText(name: ts.PropertyName | ts.BindingName | undefined, source: ts.SourceFile): string | undefined {
  if (!name) return undefined;
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name) || ts.isPrivateIdentifier(name)) return name.text;
  return name.getText(source);
}

/** The node whose leading comments may justify `fn`: the statement or property that holds it. */
function commentAnchor(fn: FunctionNode): ts.Node {
  let node: ts.Node = fn;
  for (;;) {
    const parent = node.parent;
    if (!parent) return node;
    if (ts.isParenthesizedExpression(parent) || ts.isAsExpression(parent) || ts.isSatisfiesExpression(parent)) node = parent;
    else if (ts.isVariableDeclaration(parent) && parent.initializer === node) node = parent.parent.parent; // VariableStatement
    else if (ts.isPropertyAssignment(parent) && parent.initializer === node) return parent;
    else if (ts.isPropertyDeclaration(parent) && parent.initializer === node) return parent;
    else if (ts.isExportAssignment(parent)) return parent;
    else if (ts.isBinaryExpression(parent) && parent.right === node && ts.isExpressionStatement(parent.parent)) return parent.parent;
    else return node;
  }
}

/** Own name of a function: its identifier, or the variable / property / assignment that holds it. */
function ownName(fn: FunctionNode, source: ts.SourceFile): string | undefined {
  if (ts.isConstructorDeclaration(fn)) return 'constructor';
  if (!ts.isArrowFunction(fn) && fn.name) return propertyNameText(fn.name, source);
  let node: ts.Node = fn;
  while (node.parent && (ts.isParenthesizedExpression(node.parent) || ts.isAsExpression(node.parent) || ts.isSatisfiesExpression(node.parent))) node = node.parent;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent)) return propertyNameText(parent.name, source);
  if (ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return propertyNameText(parent.name, source);
  if (ts.isBinaryExpression(parent) && parent.right === node) return parent.left.getText(source);
  if (ts.isCallExpression(parent)) return `${parent.expression.getText(source)}(callback)`;
  return undefined;
}

/** `execCommand.handle` for a method of an object literal held by `execCommand`; classes likewise. */
function qualifiedName(fn: FunctionNode, source: ts.SourceFile): string {
  const name = ownName(fn, source) ?? '<anonymous>';
  const holder = fn.parent;
  if (ts.isObjectLiteralExpression(holder) || ts.isPropertyAssignment(fn.parent) || ts.isClassLike(holder)) {
    const container = ts.isClassLike(holder) ? holder : holder.parent && ts.isObjectLiteralExpression(holder) ? holder : undefined;
    if (container && ts.isClassLike(container) && container.name) return `${container.name.text}.${name}`;
    if (container && ts.isObjectLiteralExpression(container)) {
      const outer = container.parent;
      if (outer && (ts.isVariableDeclaration(outer) || ts.isPropertyAssignment(outer))) return `${propertyNameText(outer.name, source)}.${name}`;
    }
  }
  if (ts.isPropertyAssignment(holder) && ts.isObjectLiteralExpression(holder.parent)) {
    const outer = holder.parent.parent;
    if (outer && (ts.isVariableDeclaration(outer) || ts.isPropertyAssignment(outer))) return `${propertyNameText(outer.name, source)}.${name}`;
  }
  return name;
}

function justificationOf(fn: FunctionNode, source: ts.SourceFile): string | undefined {
  const anchor = commentAnchor(fn);
  const text = source.getFullText();
  for (const range of ts.getLeadingCommentRanges(text, anchor.getFullStart()) ?? []) {
    const comment = text.slice(range.pos, range.end);
    if (!MARKER_WITH_REASON.test(comment)) continue;
    const after = comment.slice(comment.indexOf(LONG_FUNCTION_MARKER) + LONG_FUNCTION_MARKER.length);
    return after.replace(/\*\/\s*$/, '').replace(/\s*\n\s*(\*|\/\/)\s?/g, ' ').trim();
  }
  return undefined;
}

/** Every function in one source text (closures, object-literal methods, class members included). */
export function measureSource(file: string, text: string): FunctionLength[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node, outer: string[]): void => {
    let path = outer;
    if (isFunctionNode(node) && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      path = [...outer, qualifiedName(node, source)];
      const justification = justificationOf(node, source);
      found.push({ file, name: path.join(' > '), line: start + 1, lines: end - start + 1, ...(justification ? { justification } : {}) });
    }
    ts.forEachChild(node, (child) => visit(child, path));
  };
  visit(source, []);
  return found;
}

function isSourceFile(name: string): boolean {
  return /\.(ts|mts|cts)$/.test(name) && !/\.d\.[mc]?ts$/.test(name) && !/\.test(-d)?\.[mc]?ts$/.test(name);
}

function walk(dir: string, files: string[]): void {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) walk(path, files);
    else if (isSourceFile(entry)) files.push(path);
  }
}

/** Every function in `<root>/packages/<name>/src`, test files excluded, longest first. */
export function measurePackages(root: string): FunctionLength[] {
  const files: string[] = [];
  const packages = join(root, 'packages');
  for (const name of readdirSync(packages).sort()) {
    const src = join(packages, name, 'src');
    try {
      if (statSync(src).isDirectory()) walk(src, files);
    } catch {
      // a package without src (none today) has nothing to measure
    }
  }
  return files
    .flatMap((path) => measureSource(relative(root, path).split('\\').join('/'), readFileSync(path, 'utf8')))
    .sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line);
}

export interface LengthVerdict {
  /** Over the limit without a justification comment. */
  unjustified: FunctionLength[];
  /** Over the limit, justified. */
  justified: FunctionLength[];
  /** A justification on a function that is no longer over the limit: drop the comment. */
  stale: FunctionLength[];
}

export function judge(functions: FunctionLength[], max = MAX_FUNCTION_LINES): LengthVerdict {
  return {
    unjustified: functions.filter((fn) => fn.lines > max && !fn.justification),
    justified: functions.filter((fn) => fn.lines > max && fn.justification),
    stale: functions.filter((fn) => fn.lines <= max && fn.justification),
  };
}

export function formatFunction(fn: FunctionLength): string {
  return `${String(fn.lines).padStart(4)}  ${fn.file}:${fn.line}  ${fn.name}${fn.justification ? `  — ${fn.justification}` : ''}`;
}
