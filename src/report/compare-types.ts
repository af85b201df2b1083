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
  result: PairedDifference | { error: string };
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
