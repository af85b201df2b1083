import { StatisticsError } from '../core/errors.js';
import { assertFiniteSample, assertSameLength, tTwoSidedP } from './distributions.js';

export interface PearsonResult {
  r: number;
  /** Two-sided p-value of H0: ρ = 0 (t-distribution with n − 2 df). */
  p: number;
}

export interface SpearmanResult {
  rho: number;
  /** Two-sided p-value as scipy.stats.spearmanr: t-distribution with n − 2 df. */
  p: number;
}

/** 1-based ranks; tied values share the average of the ranks they span. */
export function averageRanks(values: readonly number[]): number[] {
  const order = values.map((_, i) => i).sort((a, b) => values[a]! - values[b]!);
  const ranks = new Array<number>(values.length);
  let start = 0;
  while (start < order.length) {
    let end = start + 1;
    while (end < order.length && values[order[end]!] === values[order[start]!]) end++;
    // positions start..end-1 hold ranks start+1..end; their average is (start+1+end)/2
    const shared = (start + 1 + end) / 2;
    for (let k = start; k < end; k++) ranks[order[k]!] = shared;
    start = end;
  }
  return ranks;
}

function correlationCoefficient(x: readonly number[], y: readonly number[], name: string): number {
  const n = x.length;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i]!;
    my += y[i]!;
  }
  mx /= n;
  my /= n;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    const dx = x[i]! - mx;
    const dy = y[i]! - my;
    sxx += dx * dx;
    syy += dy * dy;
    sxy += dx * dy;
  }
  if (!(sxx > 0)) throw new StatisticsError(`${name}: x is constant; the correlation is undefined`);
  if (!(syy > 0)) throw new StatisticsError(`${name}: y is constant; the correlation is undefined`);
  // one square root of the product keeps exact cases exact (ranks 1..3 give r = 1, not 1 − 2ε)
  const product = sxx * syy;
  const norm = Number.isFinite(product) && product > 0 ? Math.sqrt(product) : Math.sqrt(sxx) * Math.sqrt(syy);
  const r = sxy / norm;
  return Math.max(-1, Math.min(1, r));
}

/** The t-test of a correlation coefficient; equal to scipy's exact beta form. */
function correlationP(r: number, n: number): number {
  const df = n - 2;
  if (Math.abs(r) === 1) return 0;
  const t = r * Math.sqrt(df / ((1 - r) * (1 + r)));
  return tTwoSidedP(t, df);
}

function validatePair(x: readonly number[], y: readonly number[], name: string): void {
  assertFiniteSample(x, 'x', 3);
  assertFiniteSample(y, 'y', 3);
  assertSameLength(x, y, `${name}(x, y)`);
}

/** Pearson's product-moment correlation with its two-sided p-value (as scipy.stats.pearsonr). */
export function pearson(x: readonly number[], y: readonly number[]): PearsonResult {
  validatePair(x, y, 'pearson');
  const r = correlationCoefficient(x, y, 'pearson');
  return { r, p: correlationP(r, x.length) };
}

/** Spearman's rank correlation with average ranks for ties (as scipy.stats.spearmanr). */
export function spearman(x: readonly number[], y: readonly number[]): SpearmanResult {
  validatePair(x, y, 'spearman');
  const rho = correlationCoefficient(averageRanks(x), averageRanks(y), 'spearman');
  return { rho, p: correlationP(rho, x.length) };
}
