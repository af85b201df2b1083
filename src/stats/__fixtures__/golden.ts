// Test support: reads the committed golden fixtures and compares with a relative tolerance.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';

export function loadGolden<T>(file: 'golden-tests.json' | 'golden-mixed.json' | 'golden-distributions.json'): T {
  return JSON.parse(readFileSync(new URL(`./${file}`, import.meta.url), 'utf8')) as T;
}

/**
 * Distribution values from scipy.stats, one tuple a point with the expected value last:
 * t CDF (x, df, p), t quantile (p, df, x), normal CDF (x, p), χ² CDF (x, df, p), F CDF (x, d1, d2, p).
 */
export interface DistributionGrid {
  tCdf: [number, number, number][];
  tQuantile: [number, number, number][];
  normalCdf: [number, number][];
  chisquareCdf: [number, number, number][];
  fCdf: [number, number, number, number][];
}

/** |actual − expected| ≤ relative·|expected| + absolute. */
export function expectClose(
  actual: number,
  expected: number,
  relative: number,
  absolute = 0,
  label = '',
): void {
  const allowed = relative * Math.abs(expected) + absolute;
  const error = Math.abs(actual - expected);
  if (!(error <= allowed)) {
    expect.fail(`${label}: got ${actual}, expected ${expected} (error ${error} > ${allowed})`);
  }
}
