import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import {
  assertFiniteValues,
  finiteReplicates,
  type Interval,
  percentileInterval,
  type ResamplingOptions,
  type ResolvedResampling,
  resolveResampling,
} from './resampling-common.js';
import { rng } from './rng.js';

/** What every percentile bootstrap returns. */
export interface BootstrapResult {
  /** The statistic on the original data. */
  estimate: number;
  /** Percentile interval (type-7 quantiles of the replicates at (1 ± level)/2). */
  ci: Interval;
  level: number;
  B: number;
  seed: number;
  /** Replicate statistics in draw order (undefined ones removed; see invalidReplicates). */
  replicates: Float64Array;
  /** Replicates whose statistic was not finite; they are excluded from the interval. */
  invalidReplicates: number;
}

/**
 * Row-level percentile bootstrap: draws `values.length` values with replacement B times and
 * evaluates `statistic` on each draw. The array handed to `statistic` is a buffer reused
 * across replicates — read it, do not keep it.
 */
export function bootstrapCI(
  values: readonly number[] | Float64Array,
  statistic: (sample: Float64Array) => number,
  options: ResamplingOptions = {},
): BootstrapResult {
  assertFiniteValues(values, 'values', 1);
  if (typeof statistic !== 'function') {
    throw new InvalidArgumentError('statistic', 'must be a function of a Float64Array');
  }
  const settings = resolveResampling(options, 'bootstrapCI');
  const data = Float64Array.from(values);
  const estimate = statistic(Float64Array.from(data));
  if (!Number.isFinite(estimate)) {
    throw new StatisticsError(`bootstrapCI: the statistic on the original data is ${estimate}`);
  }
  const n = data.length;
  const random = rng(settings.seed);
  const sample = new Float64Array(n);
  const raw = new Float64Array(settings.B);
  for (let b = 0; b < settings.B; b++) {
    for (let i = 0; i < n; i++) sample[i] = data[random.int(n)] as number;
    raw[b] = statistic(sample);
  }
  return percentileBootstrap(estimate, raw, settings, 'bootstrapCI');
}

/**
 * The result of a percentile bootstrap from its raw replicate statistics (in draw order):
 * undefined replicates are dropped and counted (refused past settings.maxInvalidFraction),
 * the interval is taken over the rest.
 */
export function percentileBootstrap(estimate: number, raw: Float64Array, settings: ResolvedResampling, where: string): BootstrapResult {
  const { replicates, invalid } = finiteReplicates(raw, settings, where);
  return {
    estimate,
    ci: percentileInterval(replicates, settings.level),
    level: settings.level,
    B: settings.B,
    seed: settings.seed,
    replicates,
    invalidReplicates: invalid,
  };
}
