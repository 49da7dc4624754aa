import type { StepContext } from '@switchyard/protocol';
import type { DiffBudget } from './bounded-diff';
import { gitFileDiff } from './unified-diff';
import type { FileState } from './verify-patch';

/** The `turnState` key under which apply_patch keeps the turn's diff tracker. */
export const TURN_DIFF_KEY = '@switchyard/tool-apply-patch:turn-diff';

/** Aggregates every file apply_patch changed in a turn: content at first touch vs now. */
export interface TurnDiffTracker {
  /** Records the files of an applied patch (the first `before` of a path is its baseline). */
  record(files: readonly FileState[]): void;
  /** The turn's git-style unified diff, files sorted by path; `""` when nothing differs. */
  unifiedDiff(): string;
  /** Paths (relative to the root) whose content differs from their baseline. */
  changedPaths(): string[];
}

interface Tracked {
  displayPath: string;
  baseline: string | null;
  current: string | null;
  /** The file's diff, computed on first need and kept until the file changes again. */
  diff?: string;
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
 */
export function createTurnDiffTracker(budget: DiffBudget = TURN_DIFF_BUDGET): TurnDiffTracker {
  const files = new Map<string, Tracked>();
  const differing = () =>
    [...files.values()].filter((file) => file.baseline !== file.current).sort((a, b) => (a.displayPath < b.displayPath ? -1 : a.displayPath > b.displayPath ? 1 : 0));
  return {
    record(states) {
      for (const state of states) {
        const known = files.get(state.path);
        if (known) {
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
        .map((file) => (file.diff ??= gitFileDiff(file.displayPath, file.baseline, file.current, 3, budget)))
        .join('');
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
