import ts from 'typescript';

/** A string literal or template in a source file that runs over `MAX_TEXT_LINES` lines. */
export interface LongText {
  file: string;
  line: number;
  lines: number;
}

/**
 * The longest text a source file may hold in one string: a program of another language (perl, SQL,
 * a grammar) longer than this lives in a file of its own, named for its language, and reaches the
 * package as a generated module (`@switchyard/config/embed`).
 */
export const MAX_TEXT_LINES = 5;

/** Lines of a literal as written, or as it reads when its line breaks are `\n` escapes. */
function textLines(written: string): number {
  return Math.max(written.split('\n').length, written.split('\\n').length);
}

/** The string literals and templates of `text` over `MAX_TEXT_LINES` lines (generated modules are skipped by the caller). */
export function longTexts(file: string, text: string): LongText[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: LongText[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) {
      const lines = textLines(node.getText(source));
      if (lines > MAX_TEXT_LINES) found.push({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, lines });
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
