/**
 * The distribution functions the tests use (implemented in special-functions.ts), plus the
 * small input checks every test in this module shares. Tail probabilities are taken from
 * the lower CDF at −|x| so tiny p-values keep their relative precision.
 */
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { normalCdfOf, tCdfOf } from './special-functions.js';

export {
  chisquareCdfOf as chisquareCdf,
  fCdfOf as fCdf,
  normalCdfOf as standardNormalCdf,
  tCdfOf as tCdf,
  tQuantileOf as tQuantile,
} from './special-functions.js';

/** Two-sided p-value of a t statistic: 2·P(T ≤ −|t|). */
export function tTwoSidedP(t: number, df: number): number {
  return Math.min(1, 2 * tCdfOf(-Math.abs(t), df));
}

/** Two-sided p-value of a standard-normal statistic: 2·Φ(−|z|). */
export function normalTwoSidedP(z: number): number {
  return Math.min(1, 2 * normalCdfOf(-Math.abs(z)));
}

/** Rejects anything that is not an array of finite numbers of at least `minLength` items. */
export function assertFiniteSample(values: readonly number[], argument: string, minLength: number): void {
  if (!Array.isArray(values)) {
    throw new InvalidArgumentError(argument, 'expected an array of numbers');
  }
  if (values.length < minLength) {
    throw new StatisticsError(`${argument}: needs at least ${minLength} observations, got ${values.length}`);
  }
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new InvalidArgumentError(argument, `item ${i} is ${String(value)}; every value must be a finite number`);
    }
  }
}

export function assertSameLength(x: readonly unknown[], y: readonly unknown[], argument: string): void {
  if (x.length !== y.length) {
    throw new InvalidArgumentError(argument, `lengths differ (${x.length} vs ${y.length}); paired data needs equal lengths`);
  }
}

export function mean(values: readonly number[] | Float64Array): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/** Sample variance with n − 1 in the denominator (two-pass for accuracy). */
export function sampleVariance(values: readonly number[]): number {
  const m = mean(values);
  let ss = 0;
  let correction = 0;
  for (const value of values) {
    const d = value - m;
    ss += d * d;
    correction += d;
  }
  return (ss - (correction * correction) / values.length) / (values.length - 1);
}
