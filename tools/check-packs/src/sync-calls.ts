/**
 * The synchronous-call rule of the packages that run commands for many sessions on the host's
 * thread (sandbox, tool-exec, tool-apply-patch): every call of a `*Sync` function (`statSync`,
 * `fs.openSync`, `realpathSync.native`, `spawnSync`, …) in their shipped source says why it may
 * block the thread — a comment naming it synchronous on the call's statement or on a node holding
 * it (its function, the declaration or property holding that function), or a file-wide note: a
 * top-level `//` comment, detached from the next declaration by a blank line, that says so. A call
 * without one is a new blocking call on a per-session or per-call path until someone shows
 * otherwise. Tests and `test-support.ts` helpers are exempt (nothing of them ships).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** The packages the rule holds for. */
export const SYNC_RULE_PACKAGES: readonly string[] = ['sandbox', 'tool-exec', 'tool-apply-patch'];

/** A word that justifies a synchronous call when a comment holding it also gives a reason. */
const MARKER = /\bsynchronous(ly)?\b/i;
/** Shorter than this, a marked comment names no reason ("// synchronous" alone justifies nothing). */
const MIN_REASON_CHARS = 30;

/** One unjustified call: `path:line: name(…)` and the rule. */
export type SyncCallViolation = string;

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    const shipped = entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !/\.test\.ts$/.test(entry.name) && !entry.name.startsWith('test-support.');
    return shipped ? [path] : [];
  });
}

/** The name a call's callee ends with, when it is a `*Sync` function (`a.bSync(…)`, `aSync.native(…)`). */
function syncName(call: ts.CallExpression): string | undefined {
  const names: string[] = [];
  let callee: ts.Expression = call.expression;
  for (;;) {
    if (ts.isIdentifier(callee)) {
      names.push(callee.text);
      break;
    }
    if (ts.isPropertyAccessExpression(callee)) {
      names.push(callee.name.text);
      callee = callee.expression;
      continue;
    }
    break;
  }
  return names.find((name) => /^[a-z]\w*Sync$/.test(name));
}

function commentsOf(text: string, position: number): string[] {
  return (ts.getLeadingCommentRanges(text, position) ?? []).map((range) => text.slice(range.pos, range.end));
}

const justifies = (comment: string) => MARKER.test(comment) && comment.replace(/^\s*(\/\/|\/\*+|\*\/?)/gm, '').trim().length >= MIN_REASON_CHARS;

/** True when a top-level `//` comment, a blank line away from the declaration after it, justifies every call of the file. */
function hasFileNote(file: ts.SourceFile): boolean {
  const text = file.getFullText();
  return file.statements.some((statement) =>
    (ts.getLeadingCommentRanges(text, statement.getFullStart()) ?? []).some((range) => {
      const comment = text.slice(range.pos, range.end);
      const gap = text.slice(range.end, statement.getStart(file));
      return comment.startsWith('//') && /\n[ \t]*\n/.test(gap) && justifies(comment);
    }),
  );
}

function isJustified(call: ts.CallExpression, file: ts.SourceFile): boolean {
  const text = file.getFullText();
  for (let node: ts.Node | undefined = call; node && !ts.isSourceFile(node); node = node.parent) {
    if (commentsOf(text, node.getFullStart()).some(justifies)) return true;
  }
  return false;
}

/** Every unjustified `*Sync` call in the shipped source of `packages` under `repo`. */
export function findUnjustifiedSyncCalls(repo: string, packages: readonly string[] = SYNC_RULE_PACKAGES): SyncCallViolation[] {
  const violations: SyncCallViolation[] = [];
  for (const name of packages) {
    for (const path of sourceFiles(join(repo, 'packages', name, 'src'))) {
      const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
      if (hasFileNote(file)) continue;
      const visit = (node: ts.Node): void => {
        if (ts.isCallExpression(node)) {
          const sync = syncName(node);
          if (sync && !isJustified(node, file)) {
            const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
            violations.push(`${relative(repo, path)}:${line}: ${sync}(…) blocks the host's thread — say why it may, in a comment naming it synchronous above the call or its function, or make it asynchronous`);
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(file);
    }
  }
  return violations;
}
