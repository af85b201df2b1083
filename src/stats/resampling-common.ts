import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { resolveSeed } from './rng.js';

/** Options shared by every bootstrap in this module. */
export interface ResamplingOptions {
  /** Number of bootstrap replicates (default 10,000). */
  B?: number;
  /** Seed of the xoshiro128** stream (default 42). */
  seed?: number;
  /** Confidence level of the percentile interval (default 0.95). */
  level?: number;
  /**
   * Largest share of replicates whose statistic may be undefined (non-finite, zero variance,
   * empty arm) before the procedure refuses with a StatisticsError. Such replicates are dropped
   * and counted in `invalidReplicates`. Default 0.01.
   */
  maxInvalidFraction?: number;
}

export interface ResolvedResampling {
  B: number;
  seed: number;
  level: number;
  maxInvalidFraction: number;
}

/** A percentile interval [lower, upper]. */
export type Interval = readonly [number, number];

export function resolveResampling(options: ResamplingOptions | undefined, where: string): ResolvedResampling {
  const B = options?.B ?? 10_000;
  if (!Number.isSafeInteger(B) || B < 2) {
    throw new InvalidArgumentError(`${where}.B`, `must be an integer ≥ 2, got ${String(B)}`);
  }
  const level = options?.level ?? 0.95;
  if (typeof level !== 'number' || !(level > 0 && level < 1)) {
    throw new InvalidArgumentError(`${where}.level`, `must lie strictly between 0 and 1, got ${String(level)}`);
  }
  const maxInvalidFraction = options?.maxInvalidFraction ?? 0.01;
  if (typeof maxInvalidFraction !== 'number' || !(maxInvalidFraction >= 0 && maxInvalidFraction < 1)) {
    throw new InvalidArgumentError(`${where}.maxInvalidFraction`, `must lie in [0, 1), got ${String(maxInvalidFraction)}`);
  }
  return { B, seed: resolveSeed(options?.seed, `${where}.seed`), level, maxInvalidFraction };
}

export function assertFiniteValues(values: ArrayLike<number>, argument: string, minLength: number): void {
  if (values === null || typeof values !== 'object' || typeof values.length !== 'number') {
    throw new InvalidArgumentError(argument, 'expected an array of numbers');
  }
  if (values.length < minLength) {
    throw new StatisticsError(`${argument}: needs at least ${minLength} value(s), got ${values.length}`);
  }
  for (let i = 0; i < values.length; i++) assertFiniteNumber(values[i], `${argument}[${i}]`);
}

/** The one check of a single number an argument must hold. */
export function assertFiniteNumber(value: unknown, argument: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new InvalidArgumentError(argument, `must be a finite number, got ${String(value)}`);
}

/**
 * Quantile of already sorted data by linear interpolation between order statistics — Hyndman &
 * Fan type 7, the default of numpy.quantile and R's quantile(): h = (n − 1)·p,
 * Q = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]).
 */
export function quantileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) throw new StatisticsError('quantile of an empty sample is undefined');
  if (!(p >= 0 && p <= 1)) throw new InvalidArgumentError('p', `must lie in [0, 1], got ${p}`);
  const h = (n - 1) * p;
  const lo = Math.floor(h);
  const low = sorted[lo] as number;
  if (lo + 1 >= n) return low;
  const high = sorted[lo + 1] as number;
  return low + (h - lo) * (high - low);
}

/** Type-7 quantile (numpy's default `linear` method) of unsorted finite values. */
export function quantileLinear(values: ArrayLike<number>, p: number): number {
  assertFiniteValues(values, 'values', 1);
  return quantileSorted(Float64Array.from(values).sort(), p);
}

/** Equal-tailed percentile interval at `level` (type-7 quantiles at (1 ± level)/2). */
export function percentileInterval(replicates: Float64Array, level: number): Interval {
  const sorted = Float64Array.from(replicates).sort();
  const tail = (1 - level) / 2;
  return [quantileSorted(sorted, tail), quantileSorted(sorted, 1 - tail)];
}

/**
 * Two-sided bootstrap p-value for H0: statistic = `nullValue`, from the replicate distribution:
 * p = min(1, 2·min(#{θ* ≤ null} + 1, #{θ* ≥ null} + 1) / (B + 1)).
 * The +1 terms keep p away from 0 (a bootstrap of B replicates cannot show p < 2/(B+1)).
 */
export function bootstrapPValue(replicates: Float64Array, nullValue = 0): number {
  let below = 0;
  let above = 0;
  for (const value of replicates) {
    if (value <= nullValue) below++;
    if (value >= nullValue) above++;
  }
  return Math.min(1, (2 * Math.min(below + 1, above + 1)) / (replicates.length + 1));
}

/** Keeps the finite replicates and enforces the invalid-replicate budget. */
export function finiteReplicates(raw: Float64Array, settings: ResolvedResampling, where: string): { replicates: Float64Array; invalid: number } {
  let invalid = 0;
  for (const value of raw) if (!Number.isFinite(value)) invalid++;
  if (invalid > settings.maxInvalidFraction * raw.length) {
    throw new StatisticsError(
      `${where}: ${invalid} of ${raw.length} bootstrap replicates have an undefined statistic ` +
        `(more than maxInvalidFraction = ${settings.maxInvalidFraction}); the data are too sparse for this bootstrap`,
    );
  }
  if (invalid === 0) return { replicates: raw, invalid };
  const kept = new Float64Array(raw.length - invalid);
  let k = 0;
  for (const value of raw) if (Number.isFinite(value)) kept[k++] = value;
  return { replicates: kept, invalid };
}
