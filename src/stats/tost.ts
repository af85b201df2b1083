import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { assertFiniteSample, mean, sampleVariance, tCdf, tQuantile } from './distributions.js';

export interface TostOptions {
  /** Equivalence margin: H1 is −margin < μ < margin. ContextEcho pre-registered 0.08. */
  margin?: number;
  /** Level of each one-sided test. */
  alpha?: number;
}

export interface TostResult {
  mean: number;
  se: number;
  df: number;
  n: number;
  margin: number;
  alpha: number;
  /** t and p of H0: μ ≤ −margin (rejecting it says μ > −margin). */
  tLower: number;
  pLower: number;
  /** t and p of H0: μ ≥ +margin (rejecting it says μ < +margin). */
  tUpper: number;
  pUpper: number;
  /** max(pLower, pUpper): the TOST p-value. */
  p: number;
  /** The (1 − 2α) t confidence interval of the mean; inside ±margin iff equivalent. */
  ci: [number, number];
  /** p < alpha: the mean difference is within ±margin. */
  equivalent: boolean;
}

/**
 * Two one-sided t-tests for equivalence of the mean of paired differences
 * (e.g. post − pre compaction gaps) to 0 within ±margin.
 */
export function tost(diffs: readonly number[], options: TostOptions = {}): TostResult {
  const margin = options.margin ?? 0.08;
  const alpha = options.alpha ?? 0.05;
  if (!(Number.isFinite(margin) && margin > 0)) {
    throw new InvalidArgumentError('margin', `must be a positive finite number, got ${margin}`);
  }
  if (!(alpha > 0 && alpha < 0.5)) {
    throw new InvalidArgumentError('alpha', `must be in (0, 0.5), got ${alpha}`);
  }
  assertFiniteSample(diffs, 'diffs', 2);
  const n = diffs.length;
  const df = n - 1;
  const m = mean(diffs);
  const se = Math.sqrt(sampleVariance(diffs) / n);
  if (!(se > 0)) {
    throw new StatisticsError('tost: the differences have zero variance; the t statistics are undefined');
  }
  const tLower = (m + margin) / se;
  const tUpper = (m - margin) / se;
  const pLower = tCdf(-tLower, df);
  const pUpper = tCdf(tUpper, df);
  const p = Math.max(pLower, pUpper);
  const halfWidth = tQuantile(1 - alpha, df) * se;
  return {
    mean: m,
    se,
    df,
    n,
    margin,
    alpha,
    tLower,
    pLower,
    tUpper,
    pUpper,
    p,
    ci: [m - halfWidth, m + halfWidth],
    equivalent: p < alpha,
  };
}
