import type { StepContext } from '@switchyard/protocol';
import type { DiffBudget } from './bounded-diff';
import { contentHash } from './content-hash';
import { gitFileDiff } from './unified-diff';
import type { TurnFileDiff } from './helper-turn';
import type { HelperTurnRequest } from './run-helper';
import type { FileState } from './verify-patch';

/** The `turnState` key under which apply_patch keeps the turn's diff tracker. */
export const TURN_DIFF_KEY = '@switchyard/tool-apply-patch:turn-diff';

/** Aggregates every file apply_patch changed in a turn: content at first touch vs now. */
export interface TurnDiffTracker {
  /** Records the files of an applied patch (the first `before` of a path is its baseline). */
  record(files: readonly FileState[]): void;
  /** The turn's git-style unified diff, files sorted by path; `""` when nothing differs. */
  unifiedDiff(): string;
  /**
   * The turn's diff as it is now, joined only when first read: each file's part is taken now
   * (later patches do not change it), the one long string is built on demand (a host that never
   * reads a turn-diff event's text does not pay for it).
   */
  unifiedDiffSnapshot(): () => string;
  /** Paths (relative to the root) whose content differs from their baseline. */
  changedPaths(): string[];
  /**
   * How to name this turn to the helper process `instance` under `source` (its pool key): a token
   * new whenever the turn moves to another helper process, seeded with every baseline the host
   * holds, so each helper diffs against the turn's true baselines.
   */
  helperTurn(source: string, instance: number): HelperTurnRequest;
  /** Records the turn-diff parts of an applied patch as its helper computed them (see {@link TurnFileDiff}). */
  recordDiffs(files: readonly TurnFileDiff<Buffer>[]): void;
}

/** A file whose diffs came from helpers: strings, and its baseline as bytes (kept to seed a helper, never decoded here). */
interface HelperTracked {
  displayPath: string;
  /** Unset only if a helper answered a file it knew without being told (a protocol slip): then not seeded. */
  baseline?: { text: Buffer | null } | { hash: string | null };
  /** Diffs of a file that was large, shown in order before `live`. */
  sequence: string[];
  live: string;
  changed: boolean;
}

/** The file's part of the turn diff (`""` when it is back to its baseline). */
function helperDiff(file: HelperTracked): string {
  return file.changed ? file.sequence.join('') + file.live : '';
}

/** Folds one helper answer for a file into what the host holds for it. */
function recordHelperFile(files: Map<string, HelperTracked>, state: TurnFileDiff<Buffer>): void {
  const known = files.get(state.path);
  if (!known) {
    // A helper answers a file it did not know with its baseline: it was seeded with every other one.
    files.set(state.path, { displayPath: state.displayPath, ...(state.baseline ? { baseline: state.baseline } : {}), sequence: [], live: state.diff, changed: state.changed });
    return;
  }
  if (state.baseline) known.baseline = state.baseline;
  if (state.sequence && known.live !== '') known.sequence.push(known.live);
  known.live = state.diff;
  known.changed = state.changed;
}

let turns = 0;

interface Tracked {
  displayPath: string;
  baseline: string | null;
  current: string | null;
  /** The file's diff, computed on first need and kept until the file changes again. */
  diff?: string;
  /**
   * A file whose contents came without their texts (past `INLINE_CONTENT_BYTES`): the sha256 of
   * its baseline and current contents, and each patch's diff of it, in order (`git apply` applies
   * them in sequence). `baseline` / `current` are then unused.
   */
  large?: { baseline: string | null; current: string | null; diffs: string[] };
}

/** Records one patch's state of a file whose texts were left out (or an earlier one's, when later ones were). */
function recordLarge(files: Map<string, Tracked>, state: FileState): void {
  const known = files.get(state.path);
  const after = state.hashes ? state.hashes.after : contentHash(state.after);
  const diff = state.diff ?? gitFileDiff(state.displayPath, state.before, state.after);
  if (!known) {
    const baseline = state.hashes ? state.hashes.before : contentHash(state.before);
    files.set(state.path, { displayPath: state.displayPath, baseline: null, current: null, large: { baseline, current: after, diffs: [diff] } });
    return;
  }
  if (!known.large) {
    // the texts so far are small: their diff first, then this patch's
    const earlier = known.diff ?? gitFileDiff(known.displayPath, known.baseline, known.current, 3, TURN_DIFF_BUDGET);
    known.large = { baseline: contentHash(known.baseline), current: contentHash(known.current), diffs: earlier === '' ? [] : [earlier] };
    known.baseline = null;
    known.current = null;
    delete known.diff;
  }
  known.large.current = after;
  known.large.diffs.push(diff);
}

function differs(file: Tracked): boolean {
  return file.large ? file.large.baseline !== file.large.current : file.baseline !== file.current;
}

/**
 * The budget of a turn-diff file diff, run on the host's thread: jsdiff explores at most 2,000
 * edits (fewer for long files: lines × edits ≤ 4,000,000), and is not tried above 4 Mi
 * characters; past that the changed middle of the file is shown as removed and re-added (exact,
 * not minimal).
 */
export const TURN_DIFF_BUDGET: DiffBudget = Object.freeze({ maxEditLength: 2_000, maxWork: 4_000_000, maxChars: 4 * 1024 * 1024 });

/**
 * A tracker not bound to any turn (hosts that apply patches outside a session). Lazy and
 * bounded: a file's diff is computed only when the turn diff is asked for, once per change of
 * that file (a later patch re-diffs only the files it touched), each within {@link TURN_DIFF_BUDGET}.
 * A file whose state came without its texts (`FileState.hashes`, past `INLINE_CONTENT_BYTES`) is
 * kept as hashes plus each patch's diff of it, never as contents.
 */
export function createTurnDiffTracker(budget: DiffBudget = TURN_DIFF_BUDGET): TurnDiffTracker {
  const files = new Map<string, Tracked>();
  const fromHelpers = new Map<string, HelperTracked>();
  const turn = `${process.pid}.${++turns}`;
  let generation = 0;
  let lastHelper: string | undefined;
  /** Every differing file's diff, sorted by path (a file recorded both ways: the library's part first). */
  const differing = () => {
    // Keyed by absolute path, as both maps are: two workspaces may each hold an `a.txt`.
    const parts = new Map<string, { displayPath: string; diff: () => string }>();
    for (const [path, file] of files) {
      if (differs(file)) parts.set(path, { displayPath: file.displayPath, diff: () => (file.large ? file.large.diffs.join('') : (file.diff ??= gitFileDiff(file.displayPath, file.baseline, file.current, 3, budget))) });
    }
    for (const [path, file] of fromHelpers) {
      const diff = helperDiff(file);
      if (diff === '') continue;
      const local = parts.get(path);
      parts.set(path, { displayPath: file.displayPath, diff: local ? () => local.diff() + diff : () => diff });
    }
    return [...parts.values()].sort((a, b) => (a.displayPath < b.displayPath ? -1 : a.displayPath > b.displayPath ? 1 : 0));
  };
  return {
    helperTurn(source, instance) {
      const helper = `${instance}\u0000${source}`;
      if (helper === lastHelper) return { token: `${turn}.${generation}` };
      lastHelper = helper;
      generation++;
      const seed = new Map<string, NonNullable<HelperTracked['baseline']>>();
      for (const [path, file] of fromHelpers) if (file.baseline) seed.set(path, file.baseline);
      return { token: `${turn}.${generation}`, ...(seed.size > 0 ? { seed } : {}) };
    },
    recordDiffs(states) {
      for (const state of states) recordHelperFile(fromHelpers, state);
    },
    record(states) {
      for (const state of states) {
        const known = files.get(state.path);
        if (state.hashes || known?.large) recordLarge(files, state);
        else if (known) {
          if (known.current !== state.after) {
            known.current = state.after;
            delete known.diff;
          }
        } else {
          // First touch: the baseline is this patch's `before`, so a diff computed with it is the turn's.
          files.set(state.path, { displayPath: state.displayPath, baseline: state.before, current: state.after, ...(state.diff !== undefined ? { diff: state.diff } : {}) });
        }
      }
    },
    unifiedDiff() {
      return differing()
        .map((file) => file.diff())
        .join('');
    },
    unifiedDiffSnapshot() {
      const parts = differing().map((file) => file.diff());
      let joined: string | undefined;
      return () => (joined ??= parts.join(''));
    },
    changedPaths() {
      return differing().map((file) => file.displayPath);
    },
  };
}

function isTracker(value: unknown): value is TurnDiffTracker {
  return typeof value === 'object' && value !== null && typeof (value as TurnDiffTracker).record === 'function';
}

/** The tracker of the turn `step` belongs to, created on first use. */
export function turnDiffTracker(step: Pick<StepContext, 'turnState'>): TurnDiffTracker {
  const existing = step.turnState.get(TURN_DIFF_KEY);
  if (isTracker(existing)) return existing;
  const tracker = createTurnDiffTracker();
  step.turnState.set(TURN_DIFF_KEY, tracker);
  return tracker;
}

/** The aggregated git-style diff of everything apply_patch changed in the turn so far (`""` if nothing). */
export function getTurnDiff(step: Pick<StepContext, 'turnState'>): string {
  const existing = step.turnState.get(TURN_DIFF_KEY);
  return isTracker(existing) ? existing.unifiedDiff() : '';
}
