import { InvalidArgumentError } from '../core/errors.js';

/**
 * Benjamini–Hochberg FDR-adjusted p-values, in input order (statsmodels multipletests
 * method 'fdr_bh'): with p sorted ascending, p̃_(i) = min_{j ≥ i} min(1, m·p_(j)/j).
 */
export function benjaminiHochberg(p: readonly number[]): number[] {
  const m = checkPValues(p, 'benjaminiHochberg');
  const order = ascendingOrder(p);
  const adjusted = new Array<number>(m);
  let running = 1;
  for (let rank = m; rank >= 1; rank--) {
    const index = order[rank - 1] as number;
    const raw = p[index] as number;
    running = Math.min(running, (raw * m) / rank);
    // m·p/m can round one ulp below p; the adjusted value is never below the raw one.
    adjusted[index] = Math.max(raw, running);
  }
  return adjusted;
}

/**
 * Holm step-down adjusted p-values, in input order (statsmodels multipletests method 'holm'):
 * with p sorted ascending, p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j)).
 */
export function holm(p: readonly number[]): number[] {
  const m = checkPValues(p, 'holm');
  const order = ascendingOrder(p);
  const adjusted = new Array<number>(m);
  let running = 0;
  for (let rank = 1; rank <= m; rank++) {
    const index = order[rank - 1] as number;
    running = Math.max(running, Math.min(1, (m - rank + 1) * (p[index] as number)));
    adjusted[index] = running;
  }
  return adjusted;
}

function ascendingOrder(p: readonly number[]): number[] {
  return p.map((_, i) => i).sort((a, b) => (p[a] as number) - (p[b] as number) || a - b);
}

function checkPValues(p: readonly number[], where: string): number {
  if (!Array.isArray(p)) throw new InvalidArgumentError(`${where}.p`, 'expected an array of p-values');
  p.forEach((value, i) => {
    if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
      throw new InvalidArgumentError(`${where}.p[${i}]`, `must be a p-value in [0, 1], got ${String(value)}`);
    }
  });
  return p.length;
}
