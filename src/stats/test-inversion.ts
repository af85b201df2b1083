import { InvalidArgumentError } from '../core/errors.js';
import { assertFiniteValues } from './resampling-common.js';
import { resolveSeed, rng } from './rng.js';

/**
 * One procedure per claim (pure): confidence sets obtained by inverting the test that decides the
 * claim, so that "the interval excludes 0" and "p < α" are the same statement.
 *
 * - `invertShiftTest` turns any test of a location shift, p(δ), into the interval
 *   {δ : p(δ) ≥ α} (its hull), searched by bisection on each side of the estimate. The search
 *   brackets are anchored at 0 first, so the interval contains 0 exactly when p(0) ≥ α, even
 *   where p(δ) is not monotone (a permutation p is a step function).
 * - `signFlipInference`: the paired sign-flip test of a zero mean and its inverted interval
 *   (test of mean = δ applied to values − δ), from one fixed set of sign patterns (all 2^n, or
 *   B seeded ones drawn exactly as `signFlipTest` draws them, so the p at 0 is that test's p).
 */

export interface ShiftInversion {
  ci: readonly [number, number];
  /** False when the test cannot reach p < α at any shift: the set is the whole line, and `ci` is a stand-in (see below). */
  bounded: boolean;
}

/** Most bisection steps per side (the search stops at 1e-8 of the scale). */
const BISECTION_STEPS = 60;

/**
 * Interval {δ : p(δ) ≥ α} of a shift test, by bisection. `estimate` must be inside (p ≥ α) and
 * `scale` > 0 sets the first step outward. When the set is unbounded on a side (the test
 * cannot reject however far δ goes), `bounded` is false and that side is returned as ±Infinity.
 */
export function invertShiftTest(pOf: (delta: number) => number, estimate: number, scale: number, alpha: number): ShiftInversion {
  if (!(scale > 0) || !Number.isFinite(scale)) throw new InvalidArgumentError('invertShiftTest.scale', `must be a positive finite number, got ${scale}`);
  const p0 = pOf(0);
  const zeroInside = p0 >= alpha;
  const side = (direction: -1 | 1): number => {
    // inside: p ≥ α; outside: p < α. Anchor at 0 when 0 lies on this side of the estimate.
    let inside = estimate;
    let outside: number | null = null;
    const zeroOnSide = direction < 0 ? 0 <= estimate : 0 >= estimate;
    if (zeroOnSide && estimate !== 0) {
      if (zeroInside) inside = 0;
      else outside = 0;
    }
    if (outside === null) {
      let step = scale;
      for (let k = 0; k < 60; k++) {
        const candidate = inside + direction * step;
        if (pOf(candidate) < alpha) {
          outside = candidate;
          break;
        }
        inside = candidate;
        step *= 2;
      }
    }
    if (outside === null) return direction * Number.POSITIVE_INFINITY;
    let out: number = outside;
    const tolerance = scale * 1e-8;
    for (let k = 0; k < BISECTION_STEPS && Math.abs(out - inside) > tolerance; k++) {
      const mid: number = (inside + out) / 2;
      if (mid === inside || mid === out) break;
      if (pOf(mid) >= alpha) inside = mid;
      else out = mid;
    }
    return inside;
  };
  const lo = side(-1);
  const hi = side(1);
  return { ci: [lo, hi], bounded: Number.isFinite(lo) && Number.isFinite(hi) };
}

export interface SignFlipInferenceOptions {
  alpha?: number;
  /** Exact enumeration (default when n ≤ 20; at most 20). */
  exact?: boolean;
  /** Monte Carlo patterns when not exact (default 20,000). */
  B?: number;
  seed?: number;
}

export interface SignFlipInference {
  mean: number;
  /** Two-sided sign-flip p of mean = 0 (the same value as `signFlipTest`). */
  p: number;
  /** {δ : p(δ) ≥ α}: the inverted test; contains 0 exactly when p ≥ α. */
  ci: readonly [number, number];
  /** False when no shift can be rejected (too few units); `ci` is then ±Infinity. */
  bounded: boolean;
  method: 'exact' | 'monte-carlo';
  resamples: number;
  /** p as a function of the tested mean δ (for calibration and diagnostics). */
  pAt: (delta: number) => number;
}

const TIE_TOLERANCE = 1e-9;

/**
 * Sign-flip test and its inverted interval from one set of sign patterns. Each pattern keeps
 * (Σ s_i d_i, Σ s_i), so the statistic of values − δ is |Σ s_i d_i − δ Σ s_i| for every δ.
 */
export function signFlipInference(values: readonly number[], options: SignFlipInferenceOptions = {}): SignFlipInference {
  assertFiniteValues(values, 'values', 1);
  const n = values.length;
  const alpha = options.alpha ?? 0.05;
  const exact = options.exact ?? n <= 20;
  if (exact && n > 20) throw new InvalidArgumentError('signFlipInference.exact', `exact enumeration of 2^${n} patterns is too large (n ≤ 20)`);
  const B = options.B ?? 20_000;
  if (!Number.isSafeInteger(B) || B < 1) throw new InvalidArgumentError('signFlipInference.B', `must be a positive integer, got ${String(B)}`);
  const seed = resolveSeed(options.seed, 'signFlipInference.seed');
  let sumD: Float64Array;
  let sumS: Float64Array;
  if (exact) {
    const half = n >> 1;
    const left = patternSums(values.slice(0, half));
    const right = patternSums(values.slice(half));
    const size = left.d.length * right.d.length;
    sumD = new Float64Array(size);
    sumS = new Float64Array(size);
    let k = 0;
    for (let l = 0; l < left.d.length; l++) {
      const ld = left.d[l] as number;
      const ls = left.s[l] as number;
      for (let r = 0; r < right.d.length; r++) {
        sumD[k] = ld + (right.d[r] as number);
        sumS[k] = ls + (right.s[r] as number);
        k++;
      }
    }
  } else {
    // The same stream and bit order as signFlipTest: bit 1 keeps the sign, bit 0 flips it.
    const random = rng(seed);
    sumD = new Float64Array(B);
    sumS = new Float64Array(B);
    for (let b = 0; b < B; b++) {
      let d = 0;
      let s = 0;
      let bits = 0;
      for (let i = 0; i < n; i++) {
        if ((i & 31) === 0) bits = random.nextUint32();
        const v = values[i] as number;
        if (bits & 1) {
          d += v;
          s += 1;
        } else {
          d -= v;
          s -= 1;
        }
        bits >>>= 1;
      }
      sumD[b] = d;
      sumS[b] = s;
    }
  }
  let total = 0;
  for (const v of values) total += v;
  const mean = total / n;
  const pAt = (delta: number): number => {
    let observed = 0;
    let scale = 0;
    for (const v of values) {
      observed += v - delta;
      scale += Math.abs(v - delta);
    }
    const threshold = Math.abs(observed) - TIE_TOLERANCE * scale;
    let extreme = 0;
    for (let k = 0; k < sumD.length; k++) {
      if (Math.abs((sumD[k] as number) - delta * (sumS[k] as number)) >= threshold) extreme++;
    }
    return exact ? extreme / sumD.length : (extreme + 1) / (sumD.length + 1);
  };
  const p = pAt(0);
  let spread = 0;
  for (const v of values) spread = Math.max(spread, Math.abs(v - mean));
  if (exact && 2 / 2 ** n >= alpha) {
    // No sign pattern can be rarer than the observed one and its mirror: nothing is rejected.
    return { mean, p, ci: [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY], bounded: false, method: 'exact', resamples: sumD.length, pAt };
  }
  const inversion = invertShiftTest(pAt, mean, spread > 0 ? spread / Math.sqrt(n) : Math.max(Math.abs(mean), 1) * 1e-3, alpha);
  return { mean, p, ci: inversion.ci, bounded: inversion.bounded, method: exact ? 'exact' : 'monte-carlo', resamples: sumD.length, pAt };
}

/** Signed sums Σ s_i v_i and Σ s_i of every sign pattern of `values` (bit set = minus, as in signFlipTest). */
function patternSums(values: readonly number[]): { d: Float64Array; s: Float64Array } {
  const size = 2 ** values.length;
  const d = new Float64Array(size);
  const s = new Float64Array(size);
  for (let mask = 0; mask < size; mask++) {
    let sd = 0;
    let ss = 0;
    for (let i = 0; i < values.length; i++) {
      const v = values[i] as number;
      if ((mask >>> i) & 1) {
        sd -= v;
        ss -= 1;
      } else {
        sd += v;
        ss += 1;
      }
    }
    d[mask] = sd;
    s[mask] = ss;
  }
  return { d, s };
}
