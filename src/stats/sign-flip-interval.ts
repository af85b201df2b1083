import { InvalidArgumentError } from '../core/errors.js';
import { assertFiniteValues } from './resampling-common.js';
import { resolveSeed, rng } from './rng.js';

/**
 * One procedure for a paired mean difference: a sign-flip (permutation) test of mean(d) = θ and
 * the interval that inverts it, so that the p-value and the interval always agree
 * (docs/statistics.md, "Change from a baseline").
 *
 * The same set of sign patterns is used for every θ: all 2^n when n ≤ `exactUpTo` (default 16),
 * else the identity pattern and B random ones. For a pattern s, the test of θ counts it as at least
 * as extreme when |Σ sᵢ(dᵢ − θ)| ≥ |Σ (dᵢ − θ)|; that holds on one closed interval of θ around the
 * mean (the difference of the two squares is a downward quadratic in θ, or a constant for the
 * identity and all-minus patterns), so
 *   p(θ) = #{patterns whose interval holds θ} / #patterns
 * falls away from the mean on both sides, and the level-(1 − α) interval {θ : p(θ) > α} has as
 * ends the k-th smallest lower and k-th largest upper pattern bounds, k = ⌊α·#patterns⌋ + 1.
 * Hence 0 lies outside the interval exactly when p(0) ≤ α. Under H0 (each dᵢ symmetric about 0,
 * which holds when two measurements of a unit are exchangeable) P(p ≤ α) ≤ α. With too few units
 * the interval is unbounded (±Infinity; e.g. n ≤ 5 at α = 0.05). Pure.
 */

export interface SignFlipIntervalOptions {
  /** Interval level (default 0.95); the test's α is 1 − level. */
  level?: number;
  /** Random sign patterns when not exact (default 20,000). */
  B?: number;
  seed?: number;
  /** Enumerate every pattern up to this many units (default 16, at most 24). */
  exactUpTo?: number;
}

export interface SignFlipInterval {
  /** Mean of the differences. */
  estimate: number;
  /** Interval inverting the test (may be ±Infinity with few units). */
  ci: [number, number];
  /** Two-sided p of mean = 0, from the same patterns. */
  p: number;
  level: number;
  n: number;
  method: 'exact' | 'monte-carlo';
  /** Sign patterns counted (2^n, or B + 1 with the identity). */
  patterns: number;
  seed: number;
}

export function signFlipInterval(deltas: readonly number[], options: SignFlipIntervalOptions = {}): SignFlipInterval {
  assertFiniteValues(deltas, 'deltas', 1);
  const level = options.level ?? 0.95;
  if (!(level > 0 && level < 1)) throw new InvalidArgumentError('signFlipInterval.level', `must be in (0, 1), got ${level}`);
  const B = options.B ?? 20_000;
  if (!Number.isSafeInteger(B) || B < 1) throw new InvalidArgumentError('signFlipInterval.B', `must be a positive integer, got ${String(B)}`);
  const exactUpTo = Math.min(options.exactUpTo ?? 16, 24);
  const seed = resolveSeed(options.seed, 'signFlipInterval.seed');
  const n = deltas.length;
  let c = 0;
  let scale = 0;
  for (const d of deltas) {
    c += d;
    scale += Math.abs(d);
  }
  const estimate = c / n;
  const exact = n <= exactUpTo;
  const count = exact ? 2 ** n : B + 1;
  const lower = new Float64Array(count);
  const upper = new Float64Array(count);
  const random = exact ? null : rng(seed);
  for (let m = 0; m < count; m++) {
    // Pattern m: exact = the bits of m (bit set = flipped); Monte Carlo = random bits, pattern 0 the identity.
    let a = 0;
    let b = 0;
    if (exact) {
      for (let i = 0; i < n; i++) {
        const s = (m >>> i) & 1 ? -1 : 1;
        a += s * (deltas[i] as number);
        b += s;
      }
    } else if (m === 0) {
      a = c;
      b = n;
    } else {
      let bits = 0;
      for (let i = 0; i < n; i++) {
        if ((i & 31) === 0) bits = (random as ReturnType<typeof rng>).nextUint32();
        const s = bits & 1 ? -1 : 1;
        bits >>>= 1;
        a += s * (deltas[i] as number);
        b += s;
      }
    }
    if (b === n || b === -n) {
      lower[m] = Number.NEGATIVE_INFINITY;
      upper[m] = Number.POSITIVE_INFINITY;
      continue;
    }
    const r1 = (a - c) / (b - n);
    const r2 = (a + c) / (b + n);
    lower[m] = Math.min(r1, r2);
    upper[m] = Math.max(r1, r2);
  }
  const alpha = 1 - level;
  const k = Math.floor(alpha * count + 1e-9) + 1;
  const sortedLower = Float64Array.from(lower).sort();
  const sortedUpper = Float64Array.from(upper).sort();
  const lo = k <= count ? (sortedLower[k - 1] as number) : Number.NEGATIVE_INFINITY;
  const hi = k <= count ? (sortedUpper[count - k] as number) : Number.POSITIVE_INFINITY;
  // p(0): the patterns whose interval holds 0 (a tolerance proportional to the data absorbs rounding at ties).
  const tolerance = 1e-9 * (scale / n + Number.MIN_VALUE);
  let holding = 0;
  for (let m = 0; m < count; m++) if ((lower[m] as number) <= tolerance && (upper[m] as number) >= -tolerance) holding++;
  // `+ 0` turns a -0 into 0.
  return { estimate: estimate + 0, ci: [lo + 0, hi + 0], p: holding / count, level, n, method: exact ? 'exact' : 'monte-carlo', patterns: count, seed };
}
