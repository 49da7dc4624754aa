import { contentHash } from './content-hash';
import { INLINE_CONTENT_BYTES } from './limits';
import { TURN_DIFF_BUDGET } from './turn-diff';
import { gitFileDiff } from './unified-diff';
import { fileGitDiff, type FileState } from './verify-patch';

/** A file's baseline in a turn, as the helper keeps it: its text (`null`: absent), or only its sha256 once it was large. */
export type Baseline = { text: string | null } | { hash: string | null };

/**
 * One file's part of the turn diff, as the helper answers it (the host keeps these strings and the
 * baselines, never decodes a file's text):
 * - `sequence`: `diff` is this patch's diff, to follow the file's earlier diffs (a file past
 *   `INLINE_CONTENT_BYTES`, whose texts are not kept: `git apply` applies the diffs in turn);
 * - otherwise `diff` is the file's whole turn diff, baseline → now, and replaces the earlier one.
 * `changed` is false when the file is back to its baseline (it then drops out of the turn diff).
 * `baseline` is set when the helper's baseline of the file changed (first touch in the turn, or a
 * text baseline that became a hash): the host keeps it to seed a helper that does not know it.
 */
export interface TurnFileDiff<Text = string> {
  path: string;
  displayPath: string;
  diff: string;
  sequence: boolean;
  changed: boolean;
  baseline?: { text: Text | null } | { hash: string | null };
}

/** True when a text is past {@link INLINE_CONTENT_BYTES} (by length first: no UTF-8 pass over a small text). */
export function tooLarge(...texts: Array<string | null>): boolean {
  const length = texts.reduce((sum, text) => sum + (text?.length ?? 0), 0);
  if (length > INLINE_CONTENT_BYTES) return true;
  return length * 3 > INLINE_CONTENT_BYTES && texts.reduce((sum, text) => sum + Buffer.byteLength(text ?? '', 'utf8'), 0) > INLINE_CONTENT_BYTES;
}

/**
 * Turns whose baselines a helper keeps, the most recently used (a session's turns come one after
 * another, so the turn in progress is always among them; older ones only hold memory).
 */
const TURNS_KEPT = 4;

/**
 * The turn diff's baselines, kept in the helper process from its own reads: the first `before` of
 * each file in a turn, so the host receives diffs, not texts. The host names the turn (an opaque
 * token, new whenever it talks to another helper process in the turn) and seeds a new token with
 * the baselines it holds, so every helper diffs against the turn's true baselines.
 */
export class HelperTurns {
  private readonly turns = new Map<string, Map<string, Baseline>>();

  /** Starts `token` with the host's baselines (every file the turn touched so far); the map is kept, not copied. */
  seed(token: string, baselines: Map<string, Baseline>): void {
    this.turns.delete(token);
    this.turns.set(token, baselines);
    for (const old of [...this.turns.keys()].slice(0, -TURNS_KEPT)) this.turns.delete(old);
  }

  /** The turn-diff parts of a verified patch's files, and how to remember them once it is committed. */
  answer(token: string, files: readonly FileState[]): { diffs: TurnFileDiff[]; commit: () => void } {
    const known = this.turns.get(token);
    const updates: Array<[string, Baseline]> = [];
    const diffs = files.map((file): TurnFileDiff => {
      const baseline = known?.get(file.path);
      const large = tooLarge(file.before, file.after);
      const base = { path: file.path, displayPath: file.displayPath };
      if (baseline === undefined) {
        const first: Baseline = large ? { hash: contentHash(file.before) } : { text: file.before };
        updates.push([file.path, first]);
        return { ...base, diff: fileGitDiff(file), sequence: large, changed: file.before !== file.after, baseline: first };
      }
      if ('text' in baseline && !large) {
        // Unchanged since the baseline (first touch, or put back meanwhile): this patch's own diff, on its changed windows only.
        const diff = baseline.text === file.before ? fileGitDiff(file) : gitFileDiff(file.displayPath, baseline.text, file.after, 3, TURN_DIFF_BUDGET);
        return { ...base, diff, sequence: false, changed: baseline.text !== file.after };
      }
      const hash = 'hash' in baseline ? baseline.hash : contentHash(baseline.text);
      const became = 'text' in baseline ? { baseline: { hash } } : {};
      if ('text' in baseline) updates.push([file.path, { hash }]);
      return { ...base, diff: fileGitDiff(file), sequence: true, changed: hash !== contentHash(file.after), ...became };
    });
    const commit = () => {
      const turn = this.turns.get(token) ?? new Map<string, Baseline>();
      for (const [path, baseline] of updates) turn.set(path, baseline);
      // Most recently used last: the oldest turns are dropped first.
      this.seed(token, turn);
    };
    return { diffs, commit };
  }
}
