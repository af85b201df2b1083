// Test support: reads the committed golden fixtures and compares with a relative tolerance.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';

export function loadGolden<T>(file: 'golden-tests.json' | 'golden-mixed.json' | 'golden-distributions.json'): T {
  return JSON.parse(readFileSync(new URL(`./${file}`, import.meta.url), 'utf8')) as T;
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
