import { InvalidArgumentError } from '../core/errors.js';
import { editDistanceOfPair } from './edit-distance.js';
import { authorsDrift, authorsPerturbationDrift } from './authors.js';
import { jensenShannonOfPair, type MetricRules } from './jensen-shannon.js';
import { internPair } from './symbols.js';
import { describeValue, requireUnitInterval, type SymbolSequence } from './validate.js';

function driftOfPair(a: unknown, b: unknown, alpha: number, nameA: string, nameB: string): number {
  const pair = internPair(a, b, nameA, nameB);
  const longest = Math.max(pair.n, pair.m);
  if (longest === 0) return 0;
  const sequenceTerm = editDistanceOfPair(pair) / longest;
  const distributionTerm = jensenShannonOfPair(pair);
  return alpha * sequenceTerm + (1 - alpha) * distributionTerm;
}

/**
 * Per-pair SRI drift (DriftLens eq. 16 / eq. 3–5):
 * d(a, b) = α · ED(a, b) / max(|a|, |b|) + (1 − α) · JS(h_a, h_b),
 * with ED the symbol-level Levenshtein distance and JS the normalized Jensen–Shannon
 * distance of {@link jensenShannon}. In [0, 1]; lower = more stable; symmetric.
 *
 * Edge cases: both empty → 0; exactly one empty → 1 (both terms are 1). With `{ authors: true }`
 * the DriftLens authors' definition (their JS; one empty side ≈ 0.8536).
 *
 * @param alpha weight of the order-sensitive term, in [0, 1] (paper: 0.5).
 * @throws InvalidArgumentError naming `a`, `b` or `alpha`.
 */
export function sriDrift(a: SymbolSequence, b: SymbolSequence, alpha = 0.5, options: MetricRules = {}): number {
  if (options.authors === true) return authorsDrift(a, b, alpha);
  requireUnitInterval(alpha, 'alpha');
  return driftOfPair(a, b, alpha, 'a', 'b');
}

/**
 * SRI drift score of one question (DriftLens eq. 17): the mean of
 * {@link sriDrift}(base, S_k) over the K perturbed variants S_k. In [0, 1]; lower = less drift.
 *
 * With `{ authors: true }` the authors' compute_perturbation_drift (their drift; 0 for K = 0).
 *
 * @throws InvalidArgumentError naming `base`, `variants` (not an array, or empty: eq. 17
 *   is undefined for K = 0), `variants[k]`, or `alpha`.
 */
export function sri(base: SymbolSequence, variants: readonly SymbolSequence[], alpha = 0.5, options: MetricRules = {}): number {
  if (options.authors === true) return authorsPerturbationDrift(base, variants, alpha);
  requireUnitInterval(alpha, 'alpha');
  if (!Array.isArray(variants)) {
    throw new InvalidArgumentError('variants', `expected an array of symbol sequences, got ${describeValue(variants)}`);
  }
  if (variants.length === 0) {
    throw new InvalidArgumentError('variants', 'needs at least one perturbed sequence (eq. 17 averages over K ≥ 1 variants)');
  }
  let total = 0;
  for (let k = 0; k < variants.length; k++) {
    total += driftOfPair(base, variants[k], alpha, 'base', `variants[${k}]`);
  }
  return total / variants.length;
}

/**
 * SRI robustness index 1 − σ_SRI(Q) (App. F): higher = more robust. Same arguments,
 * edge cases and errors as {@link sri}.
 */
export function sriRobustness(base: SymbolSequence, variants: readonly SymbolSequence[], alpha = 0.5, options: MetricRules = {}): number {
  return 1 - sri(base, variants, alpha, options);
}
