import { StatisticsError } from '../core/errors.js';
import { assertFiniteSample, mean, sampleVariance } from './distributions.js';

/**
 * Cohen's d of x against y with the pooled standard deviation
 * √(((n1−1)s1² + (n2−1)s2²) / (n1+n2−2)). Positive when x has the larger mean.
 */
export function cohensD(x: readonly number[], y: readonly number[]): number {
  assertFiniteSample(x, 'x', 2);
  assertFiniteSample(y, 'y', 2);
  const pooled = ((x.length - 1) * sampleVariance(x) + (y.length - 1) * sampleVariance(y)) / (x.length + y.length - 2);
  if (!(pooled > 0)) {
    throw new StatisticsError('cohensD: pooled standard deviation is zero; d is undefined');
  }
  return (mean(x) - mean(y)) / Math.sqrt(pooled);
}
