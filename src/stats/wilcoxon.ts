/**
 * Wilcoxon signed-rank test, two-sided, reproducing scipy.stats.wilcoxon of
 * SciPy 1.17 with its defaults (zero_method='wilcox', correction=False,
 * method='auto'). With n = number of differences *including* zeros:
 *   - n > 50                          → normal approximation;
 *   - n ≤ 50, no ties and no zeros    → exact null distribution;
 *   - n ≤ 13 with ties or zeros       → exact sign-flip enumeration (all 2^n flips);
 *   - otherwise                       → normal approximation.
 * Zeros are dropped before ranking; the normal approximation uses the tie
 * correction Σ(t³ − t)/48 and no continuity correction.
 */
import { StatisticsError } from '../core/errors.js';
import { averageRanks } from './correlation.js';
import { assertFiniteSample, assertSameLength, normalTwoSidedP } from './distributions.js';

export type WilcoxonMethod = 'exact' | 'sign-flip' | 'normal';

export interface WilcoxonResult {
  /** min(W+, W−) of the non-zero differences. */
  statistic: number;
  p: number;
  method: WilcoxonMethod;
  /** Non-zero differences that were ranked. */
  n: number;
  /** Zero differences dropped before ranking. */
  zeros: number;
  /** Normal-approximation z (only for method 'normal'). */
  z?: number;
}

const EXACT_MAX_N = 50;
const SIGN_FLIP_MAX_N = 13;

export function wilcoxonSignedRank(x: readonly number[], y?: readonly number[]): WilcoxonResult {
  assertFiniteSample(x, 'x', 1);
  let differences: number[];
  if (y === undefined) {
    differences = [...x];
  } else {
    assertFiniteSample(y, 'y', 1);
    assertSameLength(x, y, 'wilcoxonSignedRank(x, y)');
    differences = x.map((value, i) => value - y[i]!);
  }
  const total = differences.length;
  const nonZero = differences.filter((d) => d !== 0);
  const zeros = total - nonZero.length;
  if (nonZero.length === 0) {
    throw new StatisticsError('wilcoxonSignedRank: every difference is zero; the test has nothing to rank');
  }
  const ranks = averageRanks(nonZero.map(Math.abs));
  let rPlus = 0;
  let rMinus = 0;
  for (let i = 0; i < nonZero.length; i++) {
    if (nonZero[i]! > 0) rPlus += ranks[i]!;
    else rMinus += ranks[i]!;
  }
  const statistic = Math.min(rPlus, rMinus);
  const tieSizes = tieGroupSizes(ranks);
  const hasTies = tieSizes.some((size) => size > 1);
  const base = { statistic, n: nonZero.length, zeros };

  if (total <= EXACT_MAX_N && !hasTies && zeros === 0) {
    return { ...base, method: 'exact', p: enumeratedP(ranks, rPlus) };
  }
  if (total <= SIGN_FLIP_MAX_N) {
    return { ...base, method: 'sign-flip', p: enumeratedP(ranks, rPlus) };
  }
  const count = nonZero.length;
  const meanW = (count * (count + 1)) / 4;
  let tieCorrection = 0;
  for (const size of tieSizes) tieCorrection += size * size * size - size;
  const variance = (count * (count + 1) * (2 * count + 1) - tieCorrection / 2) / 24;
  const z = (rPlus - meanW) / Math.sqrt(variance);
  return { ...base, method: 'normal', z: -Math.abs(z), p: normalTwoSidedP(z) };
}

function tieGroupSizes(ranks: readonly number[]): number[] {
  const counts = new Map<number, number>();
  for (const rank of ranks) counts.set(rank, (counts.get(rank) ?? 0) + 1);
  return [...counts.values()];
}

/**
 * 2·min(P(W ≤ w), P(W ≥ w)) over all 2^n sign patterns of the given ranks, capped at 1: the exact
 * null distribution when the ranks are 1..n, exact sign-flip enumeration with tied (half-integer)
 * ranks. Ranks are doubled so the rank sums are integers; every count is an integer below 2^53,
 * so the sums are exact whatever the order of the ranks.
 */
function enumeratedP(ranks: readonly number[], rPlus: number): number {
  const doubled = ranks.map((rank) => Math.round(rank * 2));
  const max = doubled.reduce((a, b) => a + b, 0);
  const counts = new Float64Array(max + 1);
  counts[0] = 1;
  let reach = 0;
  for (const r of doubled) {
    reach += r;
    for (let sum = reach; sum >= r; sum--) counts[sum]! += counts[sum - r]!;
  }
  const observed = Math.round(rPlus * 2);
  let lower = 0;
  for (let s = 0; s <= observed; s++) lower += counts[s]!;
  let upper = 0;
  for (let s = observed; s <= max; s++) upper += counts[s]!;
  const totalPatterns = 2 ** ranks.length;
  return Math.min(1, (2 * Math.min(lower, upper)) / totalPatterns);
}
