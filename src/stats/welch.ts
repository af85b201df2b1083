import { StatisticsError } from '../core/errors.js';
import { assertFiniteSample, mean, sampleVariance, tTwoSidedP } from './distributions.js';

export interface WelchResult {
  /** (mean(x) − mean(y)) / √(s²x/nx + s²y/ny) */
  t: number;
  /** Welch–Satterthwaite degrees of freedom. */
  df: number;
  /** Two-sided p-value. */
  p: number;
}

/** Welch's unequal-variance two-sample t-test (two-sided), as scipy.stats.ttest_ind(equal_var=False). */
export function welchTTest(x: readonly number[], y: readonly number[]): WelchResult {
  assertFiniteSample(x, 'x', 2);
  assertFiniteSample(y, 'y', 2);
  const vx = sampleVariance(x) / x.length;
  const vy = sampleVariance(y) / y.length;
  const se2 = vx + vy;
  if (!(se2 > 0)) {
    throw new StatisticsError('welchTTest: both samples have zero variance; t is undefined');
  }
  const t = (mean(x) - mean(y)) / Math.sqrt(se2);
  const df = (se2 * se2) / ((vx * vx) / (x.length - 1) + (vy * vy) / (y.length - 1));
  return { t, df, p: tTwoSidedP(t, df) };
}
