import { InvalidArgumentError } from '../core/errors.js';
import { benjaminiHochberg } from './multiple-testing.js';

/**
 * Intervals that agree with a Benjamini–Hochberg decision (pure; docs/statistics.md, "Memory drift",
 * "d_rel: one interval and one p"). Each test is a two-sided bootstrap test of 0 whose p is
 * `2·min(#{r ≤ θ} + 1, #{r ≥ θ} + 1)/(n + 1)` over its n replicates r (`bootstrapPValue`). Its
 * inversion at level q is the set {θ : p(θ) ≥ q}, an interval of order statistics of the
 * replicates, which contains 0 exactly when p(0) ≥ q. In a BH family of m tests with R
 * significant (BH-adjusted p < α), every interval is inverted at q = max(R, 1)·α/m — the
 * false-coverage-rate intervals of Benjamini & Yekutieli (2005) for the selected tests: a
 * significant test has p < q, every other one p ≥ q, so **the interval excludes 0 exactly when
 * the BH-adjusted p is below α**.
 */

export interface BootstrapClaim {
  /** BH-adjusted p (the deciding p). */
  p: number;
  /** The test's own bootstrap p. */
  pRaw: number;
  /** {θ : bootstrap p(θ) ≥ 1 − confidence}; infinite ends when the replicates cannot bound it. */
  interval: [number, number];
  /** 1 − max(R, 1)·α/m. */
  confidence: number;
  /** Tests in the BH family. */
  family: number;
  alpha: number;
  /** BH-adjusted p < α. */
  significant: boolean;
}

/** {θ : 2·min(#{r ≤ θ} + 1, #{r ≥ θ} + 1)/(n + 1) ≥ q}: the bootstrap test of θ inverted at level q. */
export function invertBootstrapTest(replicates: ArrayLike<number>, q: number): [number, number] {
  const n = replicates.length;
  if (n === 0) throw new InvalidArgumentError('replicates', 'need at least one bootstrap replicate');
  if (!(q > 0 && q < 1)) throw new InvalidArgumentError('q', `must lie strictly between 0 and 1, got ${q}`);
  const sorted = Float64Array.from(replicates).sort();
  // p(θ) ≥ q ⇔ #{r ≤ θ} ≥ k and #{r ≥ θ} ≥ k, with k the smallest integer ≥ q(n + 1)/2 − 1.
  const k = Math.ceil(q * ((n + 1) / 2) - 1 - 1e-12);
  // q < 1 keeps k ≤ (n + 1)/2, so the two order statistics are in order.
  if (k <= 0) return [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY];
  return [sorted[k - 1] as number, sorted[n - k] as number];
}

/** The claims of one BH family: adjusted p and the interval inverted at max(R, 1)·α/m, in input order. */
export function bhClaims(tests: ReadonlyArray<{ p: number; replicates: ArrayLike<number> }>, alpha = 0.05): BootstrapClaim[] {
  const m = tests.length;
  if (m === 0) return [];
  const adjusted = benjaminiHochberg(tests.map((t) => t.p));
  const significant = adjusted.filter((p) => p < alpha).length;
  const q = (Math.max(significant, 1) * alpha) / m;
  return tests.map((t, i) => ({
    p: adjusted[i] as number,
    pRaw: t.p,
    interval: invertBootstrapTest(t.replicates, q),
    confidence: 1 - q,
    family: m,
    alpha,
    significant: (adjusted[i] as number) < alpha,
  }));
}
