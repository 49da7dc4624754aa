// The reviewed list of deliberate differences from the reference. Each entry names what differs,
// why Switchyard keeps it, and where a host reads about it. At most 8 entries; a new one needs review.
import type { DiffCase } from './case.ts';
import type { Observation } from './compare.ts';

export interface AllowedDifference {
  id: string;
  /** What differs, for the report. */
  what: string;
  /** Why Switchyard keeps the difference. */
  reason: string;
  /** The README that documents it for hosts. */
  documented: string;
  /** Case ids it may apply to. */
  cases: RegExp;
  /** Observation keys it may apply to (default: any). */
  keys?: RegExp;
}

export const ALLOWLIST: readonly AllowedDifference[] = [];

/** The entry that accepts this difference, if any. */
export function allowedBy(testCase: DiffCase, observation: Observation): AllowedDifference | undefined {
  return ALLOWLIST.find((entry) => entry.cases.test(testCase.id) && (!entry.keys || entry.keys.test(observation.key)));
}
