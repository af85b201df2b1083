import { authorsJensenShannon } from './authors.js';
import { histogramScratch, type InternedPair, internPair } from './symbols.js';
import type { SymbolSequence } from './validate.js';

const LN2 = Math.LN2;

/**
 * Normalized JS distance between the histograms of an interned pair (eq. 4).
 * Exact: no smoothing; symbols absent from one histogram contribute 0·ln 0 = 0.
 */
export function jensenShannonOfPair(pair: InternedPair): number {
  const { a, n, b, m } = pair;
  if (n === 0 && m === 0) return 0;
  if (n === 0 || m === 0) return 1;
  const { countsA, countsB } = histogramScratch();
  for (let i = 0; i < n; i++) countsA[a[i]!]!++;
  for (let j = 0; j < m; j++) countsB[b[j]!]!++;
  let divergence = 0;
  // Visit each symbol of the union once; zeroing its counters marks it visited and
  // leaves the scratch arrays clean for the next call.
  for (let pass = 0; pass < 2; pass++) {
    const ids = pass === 0 ? a : b;
    const length = pass === 0 ? n : m;
    for (let k = 0; k < length; k++) {
      const id = ids[k]!;
      const countA = countsA[id]!;
      const countB = countsB[id]!;
      if (countA === 0 && countB === 0) continue;
      countsA[id] = 0;
      countsB[id] = 0;
      const p = countA / n;
      const q = countB / m;
      // A symbol on one side only has mean = p/2 exactly, so its term is p·ln 2: no log call.
      if (countB === 0) divergence += p * LN2;
      else if (countA === 0) divergence += q * LN2;
      else {
        const mean = (p + q) / 2;
        divergence += p * Math.log(p / mean) + q * Math.log(q / mean);
      }
    }
  }
  // divergence = KL(p‖mean) + KL(q‖mean) = 2·JSD; rounding can leave it a hair below 0
  // (clamped before the square root) or a hair above 2·ln 2 (clamped to distance 1).
  const jsd = divergence / 2;
  if (jsd <= 0) return 0;
  const distance = Math.sqrt(jsd / LN2);
  return Math.min(distance, 1);
}

/**
 * Normalized Jensen–Shannon distance between the symbol histograms of `a` and `b`
 * (DriftLens eq. 4): with h_a, h_b the relative symbol frequencies and h̄ their mean,
 * d = √(½ KL(h_a‖h̄) + ½ KL(h_b‖h̄)) / √(ln 2), natural logarithms, in [0, 1].
 * Order is ignored: only how often each symbol occurs matters.
 *
 * Exact, with no epsilon smoothing (symbols absent from one side contribute 0·ln 0 = 0).
 * Tiny negative rounding is clamped to 0 before the square root, and a result a
 * rounding error above 1 is clamped to 1. Identical histograms give exactly 0.
 *
 * Edge cases: both empty → 0; exactly one empty → 1 (a histogram of nothing shares
 * no mass with anything, by convention the maximal distance).
 *
 * With `{ authors: true }`: the DriftLens authors' definition instead (ε-smoothed, one empty side
 * ≈ 0.7071; src/metrics/authors.ts), as `procedure: reference` scores.
 *
 * @throws InvalidArgumentError naming `a` or `b` when it is not an array of strings.
 */
export function jensenShannon(a: SymbolSequence, b: SymbolSequence, options: MetricRules = {}): number {
  if (options.authors === true) return authorsJensenShannon(a, b);
  return jensenShannonOfPair(internPair(a, b, 'a', 'b'));
}

/** `authors: true` = the DriftLens authors' released definition (empty-sequence behaviour included). */
export interface MetricRules {
  authors?: boolean;
}
