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
  // The same test of the same values is answered once (issue #44): a report asks it again for
  // contrasts whose unit values coincide (a gap and its per-arm summaries over the same units, a
  // section repeating another's estimate), and each answer is thousands of pattern sums per
  // bisection step. The key is the exact values and options; each caller gets its own copy.
  const key = `${options.alpha}|${options.exact}|${options.B}|${options.seed}|${values.join(',')}`;
  let known = answered.get(key);
  if (known === undefined) {
    known = computeSignFlipInference([...values], options);
    if (answered.size >= ANSWERED_LIMIT) answered.clear();
    answered.set(key, known);
  }
  return { ...known, ci: [known.ci[0], known.ci[1]] };
}

/** Sign-flip answers by their exact inputs (at most ANSWERED_LIMIT kept). */
const answered = new Map<string, SignFlipInference>();
const ANSWERED_LIMIT = 4096;

function computeSignFlipInference(values: readonly number[], options: SignFlipInferenceOptions): SignFlipInference {
  const n = values.length;
  const alpha = options.alpha ?? 0.05;
  const nonZero = values.filter((v) => v !== 0);
  const zeros = n - nonZero.length;
  // Exact zeros never change sign at δ = 0 but do at any other δ; enumerating the non-zero values
  // and counting the zeros' sign sums by their binomial weights keeps the test exact with them.
  const enumerable = n <= 20 || (nonZero.length <= 20 && 2 ** nonZero.length * (zeros + 1) <= 2 ** 13);
  const exact = options.exact ?? enumerable;
  if (exact && !enumerable)
    throw new InvalidArgumentError('signFlipInference.exact', `exact enumeration of 2^${nonZero.length} patterns is too large (at most 20 non-zero values)`);
  const B = options.B ?? 20_000;
  if (!Number.isSafeInteger(B) || B < 1) throw new InvalidArgumentError('signFlipInference.B', `must be a positive integer, got ${String(B)}`);
  const seed = resolveSeed(options.seed, 'signFlipInference.seed');
  let sumD: Float64Array;
  let sumS: Float64Array;
  // Pattern groups: every base pattern once per group, its Σ s shifted by `offset`, with `weight`.
  const groups: Array<{ offset: number; weight: number }> = [];
  if (exact) {
    const base = zeros > 0 ? nonZero : [...values];
    const half = base.length >> 1;
    const left = patternSums(base.slice(0, half));
    const right = patternSums(base.slice(half));
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
    const z = zeros;
    let c = 1;
    for (let j = 0; j <= z; j++) {
      groups.push({ offset: 2 * j - z, weight: c });
      c = (c * (z - j)) / (j + 1);
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
        const sign = bits & 1 ? 1 : -1;
        d += sign * (values[i] as number);
        s += sign;
        bits >>>= 1;
      }
      sumD[b] = d;
      sumS[b] = s;
    }
    groups.push({ offset: 0, weight: 1 });
  }
  const totalWeight = exact ? 2 ** n : sumD.length;
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
    for (const g of groups) {
      let hits = 0;
      for (let k = 0; k < sumD.length; k++) {
        if (Math.abs((sumD[k] as number) - delta * ((sumS[k] as number) + g.offset)) >= threshold) hits++;
      }
      extreme += hits * g.weight;
    }
    return exact ? extreme / totalWeight : (extreme + 1) / (totalWeight + 1);
  };
  const p = pAt(0);
  const method = exact ? ('exact' as const) : ('monte-carlo' as const);
  const unbounded = { mean, p, ci: [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY] as const, bounded: false, method, resamples: totalWeight, pAt };
  if (exact && 2 / 2 ** n >= alpha) {
    // No sign pattern can be rarer than the observed one and its mirror: nothing is rejected.
    return unbounded;
  }
  // Pattern k counts as extreme at δ when (D_k − δ S_k)² ≥ (T − nδ)²: a downward parabola in δ
  // (|S_k| < n) whose roots are (T − D_k)/(n − S_k) and (T + D_k)/(n + S_k), the means of the
  // flipped subset and of the kept one; so it counts on the closed interval [a_k, b_k] between
  // them, which contains the mean. p(δ) therefore falls monotonically on each side of the mean,
  // and the ends of {δ : p(δ) ≥ α} are weighted order statistics of the a_k and b_k.
  const finish = (lo: number, hi: number): SignFlipInference => {
    let ci: readonly [number, number] = [lo, hi];
    // The closed form and the tie-tolerant count can part only at an exact tie on 0; the test's
    // own p at 0 decides, by the anchored bisection.
    if ((ci[0] > 0 || ci[1] < 0) !== p < alpha) {
      let spread = 0;
      for (const v of values) spread = Math.max(spread, Math.abs(v - mean));
      ci = invertShiftTest(pAt, mean, spread > 0 ? spread / Math.sqrt(n) : 1e-3, alpha).ci;
    }
    return { mean, p, ci, bounded: true, method, resamples: totalWeight, pAt };
  };
  // Weight needed for p(δ) ≥ α.
  const needed = exact ? alpha * totalWeight * (1 - 1e-12) : alpha * (totalWeight + 1) - 1 - 1e-9;
  let always = 0;
  const lowers: Float64Array[] = [];
  const uppers: Float64Array[] = [];
  for (const g of groups) {
    const lo = new Float64Array(sumD.length);
    const hi = new Float64Array(sumD.length);
    let count = 0;
    for (let k = 0; k < sumD.length; k++) {
      const d = sumD[k] as number;
      const sk = (sumS[k] as number) + g.offset;
      if (sk === n || sk === -n) {
        always += g.weight;
        continue;
      }
      const r1 = (total - d) / (n - sk);
      const r2 = (total + d) / (n + sk);
      lo[count] = Math.min(r1, r2);
      hi[count] = Math.max(r1, r2);
      count++;
    }
    lowers.push(lo.subarray(0, count));
    uppers.push(hi.subarray(0, count));
  }
  if (groups.length === 1 && groups[0]?.weight === 1) {
    // One group of unit weights (Monte Carlo, or exact without zeros): plain order statistics.
    const m = Math.ceil(needed - always - 1e-9);
    const lowerAll = lowers[0] as Float64Array;
    const upperAll = uppers[0] as Float64Array;
    if (m <= 0 || m > lowerAll.length) return unbounded;
    const lo = select(lowerAll, m - 1);
    const hi = select(upperAll, upperAll.length - m);
    return finish(lo, hi);
  }
  for (const part of [...lowers, ...uppers]) part.sort();
  const countBelow = (delta: number) => groups.reduce((w, g, i) => w + g.weight * countUpTo(lowers[i] as Float64Array, delta), always);
  const countAbove = (delta: number) =>
    groups.reduce((w, g, i) => w + g.weight * ((uppers[i] as Float64Array).length - countUpTo(uppers[i] as Float64Array, delta, true)), always);
  const lowerUnion = concatSorted(lowers);
  const upperUnion = concatSorted(uppers);
  if (lowerUnion.length === 0 || always >= needed) return unbounded;
  // Smallest a with countBelow(a) ≥ needed; largest b with countAbove(b) ≥ needed.
  let i0 = 0;
  let i1 = lowerUnion.length - 1;
  if (countBelow(lowerUnion[i1] as number) < needed) return unbounded;
  while (i0 < i1) {
    const mid = (i0 + i1) >> 1;
    if (countBelow(lowerUnion[mid] as number) >= needed) i1 = mid;
    else i0 = mid + 1;
  }
  const lo = lowerUnion[i0] as number;
  let j0 = 0;
  let j1 = upperUnion.length - 1;
  while (j0 < j1) {
    const mid = (j0 + j1 + 1) >> 1;
    if (countAbove(upperUnion[mid] as number) >= needed) j0 = mid;
    else j1 = mid - 1;
  }
  const hi = upperUnion[j0] as number;
  return finish(lo, hi);
}

/** The k-th smallest (0-based) of `values` by quickselect (reorders `values`). */
function select(values: Float64Array, k: number): number {
  let left = 0;
  let right = values.length - 1;
  while (right > left) {
    const pivot = values[(left + right) >> 1] as number;
    let i = left;
    let j = right;
    while (i <= j) {
      while ((values[i] as number) < pivot) i++;
      while ((values[j] as number) > pivot) j--;
      if (i <= j) {
        const t = values[i] as number;
        values[i] = values[j] as number;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) right = j;
    else if (k >= i) left = i;
    else return values[k] as number;
  }
  return values[k] as number;
}

/** Number of sorted values ≤ x, or < x when `strict`. */
function countUpTo(sorted: Float64Array, x: number, strict = false): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const value = sorted[mid] as number;
    if (strict ? value < x : value <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function concatSorted(parts: readonly Float64Array[]): Float64Array {
  if (parts.length === 1) return parts[0] as Float64Array;
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let k = 0;
  for (const p of parts) {
    out.set(p, k);
    k += p.length;
  }
  return out.sort();
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
      const sign = (mask >>> i) & 1 ? -1 : 1;
      sd += sign * (values[i] as number);
      ss += sign;
    }
    d[mask] = sd;
    s[mask] = ss;
  }
  return { d, s };
}
