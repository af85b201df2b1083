import { InvalidArgumentError } from '../core/errors.js';
import { assertFiniteValues } from './resampling-common.js';
import { resolveSeed, rng } from './rng.js';

export interface SignFlipOptions {
  /** Monte-Carlo resamples when the test is not exact (default 10,000). */
  B?: number;
  /** Seed of the Monte-Carlo stream (default 42). */
  seed?: number;
  /**
   * Force the method: true = exact enumeration (n ≤ 30), false = Monte Carlo.
   * Default: exact when n ≤ 20 (docs/decisions.md#d4: 2^n ≤ 2^20), otherwise Monte Carlo.
   */
  exact?: boolean;
  /**
   * Monte Carlo only: true (default, docs/decisions.md#d4) gives p = (b + 1)/(B + 1); false gives the
   * reference code's b/B (which can be 0), for comparison with published numbers.
   */
  plusOne?: boolean;
}

export interface SignFlipResult {
  /** Mean of the paired differences. */
  mean: number;
  /** Two-sided p-value. */
  p: number;
  n: number;
  method: 'exact' | 'monte-carlo';
  /** Sign patterns counted: 2^n (exact) or B (Monte Carlo). */
  resamples: number;
  /** Seed of the Monte-Carlo stream (recorded for exact tests too, where it is unused). */
  seed: number;
}

/** Relative tolerance on |Σ±d| so that sign patterns tying the observed value count. */
const TIE_TOLERANCE = 1e-9;

/**
 * Paired sign-flip (permutation) test of mean(deltas) = 0, two-sided.
 * Under H0 each difference is symmetric about 0, so flipping signs is exchangeable.
 * - Exact (default n ≤ 20): all 2^n sign patterns, p = #{|mean*| ≥ |mean|} / 2^n (the observed
 *   pattern is one of them, so p ≥ 2^−n).
 * - Monte Carlo: B patterns with independent fair signs, p = (b + 1)/(B + 1), b = #{|mean*| ≥ |mean|}.
 * Ties: a pattern counts when |Σ±d| ≥ |Σd| − 1e-9·Σ|d| (rounding-proof; zeros are kept and
 * simply never change sign).
 */
export function signFlipTest(deltas: readonly number[], options: SignFlipOptions = {}): SignFlipResult {
  assertFiniteValues(deltas, 'deltas', 1);
  const n = deltas.length;
  const B = options.B ?? 10_000;
  if (!Number.isSafeInteger(B) || B < 1) {
    throw new InvalidArgumentError('signFlipTest.B', `must be a positive integer, got ${String(B)}`);
  }
  const seed = resolveSeed(options.seed, 'signFlipTest.seed');
  const exact = options.exact ?? n <= 20;
  if (exact && n > 30) {
    throw new InvalidArgumentError('signFlipTest.exact', `exact enumeration of 2^${n} patterns is too large (n ≤ 30)`);
  }
  let sum = 0;
  let sumAbs = 0;
  for (const d of deltas) {
    sum += d;
    sumAbs += Math.abs(d);
  }
  const threshold = Math.abs(sum) - TIE_TOLERANCE * sumAbs;
  const mean = sum / n;
  if (exact) {
    const count = countExact(deltas, threshold);
    const patterns = 2 ** n;
    return { mean, p: count / patterns, n, method: 'exact', resamples: patterns, seed };
  }
  const random = rng(seed);
  let extreme = 0;
  for (let b = 0; b < B; b++) {
    let flipped = 0;
    let bits = 0;
    for (let i = 0; i < n; i++) {
      if ((i & 31) === 0) bits = random.nextUint32();
      const d = deltas[i] as number;
      flipped += bits & 1 ? d : -d;
      bits >>>= 1;
    }
    if (Math.abs(flipped) >= threshold) extreme++;
  }
  const p = options.plusOne === false ? extreme / B : (extreme + 1) / (B + 1);
  return { mean, p, n, method: 'monte-carlo', resamples: B, seed };
}

/**
 * Counts sign patterns with |Σ±d| ≥ threshold by meet-in-the-middle: the signed sums of each
 * half are tabulated directly (no running accumulation, so no drift), then every pair is added.
 */
function countExact(deltas: readonly number[], threshold: number): number {
  const half = deltas.length >> 1;
  const left = signedSums(deltas.slice(0, half));
  const right = signedSums(deltas.slice(half));
  let count = 0;
  for (const l of left) {
    for (const r of right) if (Math.abs(l + r) >= threshold) count++;
  }
  return count;
}

function signedSums(values: readonly number[]): Float64Array {
  const size = 2 ** values.length;
  const sums = new Float64Array(size);
  for (let mask = 0; mask < size; mask++) {
    let s = 0;
    for (let i = 0; i < values.length; i++) {
      const v = values[i] as number;
      s += (mask >>> i) & 1 ? -v : v;
    }
    sums[mask] = s;
  }
  return sums;
}
