import { InvalidArgumentError } from '../core/errors.js';
import { resolveSeed } from './rng.js';
import { signFlipInference } from './test-inversion.js';

/*
 * The sign-flip test of a paired mean difference with the interval that inverts it, in the shape
 * the baseline comparison reports (docs/statistics.md, "Change from a baseline"). One procedure:
 * the numbers come from `signFlipInference` (test-inversion.ts), the same code that decides the
 * persona and continuation verdicts, so p ≤ α exactly when 0 lies outside the interval. With too
 * few units the interval is unbounded (±Infinity; e.g. n ≤ 5 at α = 0.05). Pure.
 */

export interface SignFlipIntervalOptions {
  /** Interval level (default 0.95); the test's α is 1 − level. */
  level?: number;
  /** Random sign patterns when not exact (default 20,000). */
  B?: number;
  seed?: number;
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
  /** Sign patterns counted (2^n when exact, else B). */
  patterns: number;
  seed: number;
}

export function signFlipInterval(deltas: readonly number[], options: SignFlipIntervalOptions = {}): SignFlipInterval {
  const level = options.level ?? 0.95;
  if (!(level > 0 && level < 1)) throw new InvalidArgumentError('signFlipInterval.level', `must be in (0, 1), got ${level}`);
  const seed = resolveSeed(options.seed, 'signFlipInterval.seed');
  const r = signFlipInference(deltas, { alpha: 1 - level, B: options.B, seed });
  // `+ 0` turns a -0 into 0.
  return {
    estimate: r.mean + 0,
    ci: [r.ci[0] + 0, r.ci[1] + 0],
    p: r.p,
    level,
    n: deltas.length,
    method: r.method,
    patterns: r.resamples,
    seed,
  };
}
