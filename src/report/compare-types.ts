import type { PairedDifference } from '../stats/paired-bootstrap.js';

/** The types of `echolens compare` (report/compare-runs.ts), apart so that the Audit protocol can name them. */

export interface RunDifference {
  /** The headline statistic, e.g. "drift gap Δ (filler − real)". */
  statistic: string;
  /** What it is measured on in each run (target, judge, tier …): "A-subject ⇄ B-subject" when they differ. */
  subject: string;
  /** The unit the bootstrap draws. */
  unit: string;
  /** How to print it: plain numbers or fractions shown as percentages. */
  scale: 'number' | 'percent';
  /** `a` and `b` in it are the statistic recomputed over the shared units only (what the difference is of). */
  result: PairedDifference | { error: string };
  /**
   * Each run's own estimate over all its units, as its report shows it (null where the report has
   * none). It differs from `result.a` / `result.b` whenever a run has units the other lacks.
   */
  own: { a: number | null; b: number | null };
}

export interface RunComparison {
  audit: string;
  a: string;
  b: string;
  B: number;
  seed: number;
  rows: RunDifference[];
}

export interface CompareRunsOptions {
  B?: number;
  seed?: number;
}

/**
 * One headline statistic of a run with the value of each of its design units: what
 * `echolens history` lists and `echolens compare --baseline` pairs unit by unit (an audit's
 * `overTime` member makes them; report/baseline.ts compares them).
 */
export interface AuditSeries {
  /** e.g. "drift gap Δ (filler − real)". */
  statistic: string;
  /** What it is measured on (target, judge, tier …). */
  subject: string;
  /** The design unit the values are of (position, question, cutpoint). */
  unit: string;
  scale: 'number' | 'percent';
  /** The run's own estimate and interval, as its report shows them (null when it has none). */
  estimate: number | null;
  ci: readonly [number, number] | null;
  /**
   * The statistic's value on each design unit of this run. Two measurements of a design are paired
   * by `key`; the change is the mean over clusters (the sampled units) of the mean over each
   * cluster's units of latest − baseline.
   */
  units: ReadonlyArray<{ key: string; cluster: string; value: number }>;
}
