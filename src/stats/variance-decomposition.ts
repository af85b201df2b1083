import { getOrInsert } from '../core/get-or-insert.js';
import { InvalidArgumentError } from '../core/errors.js';
import { assertFiniteSample, assertSameLength, sampleVariance } from './distributions.js';
import { fitRandomIntercept } from './mixed-model.js';

export interface VarianceDecomposition {
  /** σ²_between: REML variance of the group random intercept. */
  between: number;
  /** σ²_within: REML residual variance. */
  within: number;
  /** between + within (the model's total variance). */
  total: number;
  /** between / total, in [0, 1] (the heterogeneity table's "between %" ÷ 100). */
  betweenShare: number;
  /**
   * Plain sample variance (n − 1) of the values. ContextEcho's heterogeneity
   * table prints this as σ²_total, which is why its rows do not add up exactly.
   */
  sampleVariance: number;
  /** True when the between-group variance sits on its boundary 0. */
  boundary: boolean;
  converged: boolean;
  n: number;
  nGroups: number;
}

/**
 * Between/within-group variance shares of a one-way random-effects model
 * (intercept-only linear mixed model with a random intercept per group) fitted by REML.
 */
export function varianceDecomposition(values: readonly number[], groups: readonly (string | number)[]): VarianceDecomposition {
  assertFiniteSample(values, 'values', 2);
  if (!Array.isArray(groups)) throw new InvalidArgumentError('groups', 'expected an array');
  assertSameLength(values, groups, 'varianceDecomposition(values, groups)');
  const indexOf = new Map<string, number>();
  const groupIndex = new Int32Array(values.length);
  for (let i = 0; i < groups.length; i++) {
    const label = groups[i];
    if (typeof label !== 'string' && !(typeof label === 'number' && Number.isFinite(label))) {
      throw new InvalidArgumentError('groups', `item ${i} is ${String(label)}; expected a string or finite number`);
    }
    const key = String(label);
    const index = getOrInsert(indexOf, key, () => indexOf.size);
    groupIndex[i] = index;
  }
  const fit = fitRandomIntercept(
    {
      x: new Float64Array(values.length).fill(1),
      p: 1,
      y: Float64Array.from(values),
      groupIndex,
      nGroups: indexOf.size,
      terms: ['(Intercept)'],
    },
    'REML',
  );
  const total = fit.groupVariance + fit.residualVariance;
  return {
    between: fit.groupVariance,
    within: fit.residualVariance,
    total,
    betweenShare: fit.groupVariance / total,
    sampleVariance: sampleVariance(values),
    boundary: fit.boundary,
    converged: fit.converged,
    n: values.length,
    nGroups: indexOf.size,
  };
}
