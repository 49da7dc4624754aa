/**
 * The bench harness: every figure is measured beside its reference in the same run and reported
 * as a ratio, on medians of several runs.
 */
export interface BenchFigure {
  /** What is measured, e.g. "nested no-op call round trip (full stack)". */
  name: string;
  /** Median value of the subject. */
  value: number;
  /** Unit of `value` and `reference.value`: "µs", "ms", "MB", "ops/s", … */
  unit: string;
  /** The reference measured in the same run, if the figure has one. */
  reference?: { name: string; value: number };
  /** subject / reference (for throughputs, reference / subject so that >1 always means "slower"). */
  ratio?: number;
  /** Free-form note (sample counts, caveats). */
  note?: string;
}

export interface Bench {
  /** Section name in the table. */
  name: string;
  run(): Promise<BenchFigure[]>;
}

/** Median of a list of numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Runs `fn` `runs` times (after `warmup` untimed runs) and returns the median duration in ms. */
export async function timeMedian(fn: () => Promise<unknown> | unknown, runs = 7, warmup = 2): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

/** A figure with its reference and ratio (`higherIsBetter` for throughputs). */
export function compare(
  name: string,
  value: number,
  unit: string,
  reference: { name: string; value: number },
  options: { higherIsBetter?: boolean; note?: string } = {},
): BenchFigure {
  const ratio = options.higherIsBetter ? reference.value / value : value / reference.value;
  return { name, value, unit, reference, ratio, note: options.note };
}

/**
 * Median duration (ms) of each function, sampled in alternation (a round runs every function once,
 * in an order that rotates) so that load on a shared machine hits the subject and its reference alike.
 * `settleMs` waits that long, untimed, before every sample: work a body leaves running in the
 * background (a launcher preparing its next command) then ends before the next body is timed, as
 * it does between an agent's commands, instead of being charged to whichever body comes next.
 */
export async function alternatingMedians(fns: ReadonlyArray<() => Promise<unknown>>, runs: number, warmup: number, settleMs = 0): Promise<number[]> {
  for (let i = 0; i < warmup; i++) for (const fn of fns) await fn();
  const samples: number[][] = fns.map(() => []);
  for (let round = 0; round < runs; round++) {
    for (let k = 0; k < fns.length; k++) {
      const index = (round + k) % fns.length;
      if (settleMs > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
      const start = performance.now();
      await fns[index]();
      samples[index].push(performance.now() - start);
    }
  }
  return samples.map(median);
}
