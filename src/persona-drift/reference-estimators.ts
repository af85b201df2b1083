import { StatisticsError } from '../core/errors.js';
import { quantileLinear } from '../stats/resampling-common.js';
import { type Rng, rng } from '../stats/rng.js';
import { wilcoxonSignedRank } from '../stats/wilcoxon.js';

/**
 * The ContextEcho authors' estimators, written from their published definitions (paper §2.4 and
 * the description of their analysis in docs/replication.md), pure. They are what `procedure:
 * reference` reports next to echolens's calibrated statistics; the verdict never uses them.
 *
 * The random streams are echolens's (xoshiro128**, seed 42), not numpy's or Python's, so a
 * percentile interval or a Monte Carlo p-value agrees with the authors' numbers within Monte Carlo
 * error, while every point estimate is the same number.
 */

export interface ReferenceOptions {
  /** Bootstrap replicates / permutation resamples (paper: 10,000). */
  B?: number;
  seed?: number;
}

export interface ArmBootstrap {
  /** Mean over positions of each position's mean score (positions weighted equally). */
  mean: number;
  /** 2.5th and 97.5th percentiles of the replicate statistics (linear interpolation). */
  ci: [number, number];
  positions: number;
  /** Scores over all positions. */
  n: number;
}

const average = (values: ArrayLike<number>): number => {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] as number;
  return sum / values.length;
};

function checkClusters(byPosition: readonly (readonly number[])[], where: string): void {
  if (byPosition.length === 0) throw new StatisticsError(`${where}: no position has a score`);
  byPosition.forEach((scores, i) => {
    if (scores.length === 0) throw new StatisticsError(`${where}: position ${i} has no score`);
    for (const s of scores) if (!Number.isFinite(s)) throw new StatisticsError(`${where}: position ${i} has a non-finite score`);
  });
}

/** Point estimate of one arm: the mean of the position means. */
export function meanOfPositionMeans(byPosition: readonly (readonly number[])[]): number {
  checkClusters(byPosition, 'meanOfPositionMeans');
  return average(byPosition.map((scores) => average(scores)));
}

/** One replicate of the two-stage scheme: positions with replacement, then scores within each drawn position. */
function twoStageReplicate(byPosition: readonly (readonly number[])[], random: Rng): number {
  const k = byPosition.length;
  let total = 0;
  for (let i = 0; i < k; i++) {
    const scores = byPosition[random.int(k)] as readonly number[];
    let sum = 0;
    for (let j = 0; j < scores.length; j++) sum += scores[random.int(scores.length)] as number;
    total += sum / scores.length;
  }
  return total / k;
}

function percentile95(replicates: Float64Array): [number, number] {
  return [quantileLinear(replicates, 0.025), quantileLinear(replicates, 0.975)];
}

/**
 * One arm of one target, as the authors' forest figure: a two-stage position-clustered bootstrap
 * (stage 1 draws as many positions as there are, with replacement; stage 2 redraws each drawn
 * position's scores with replacement); the statistic is the mean of the drawn position means.
 */
export function armClusterBootstrap(byPosition: readonly (readonly number[])[], options: ReferenceOptions = {}): ArmBootstrap {
  const mean = meanOfPositionMeans(byPosition);
  const B = options.B ?? 10_000;
  const random = rng(options.seed ?? 42);
  const replicates = new Float64Array(B);
  for (let b = 0; b < B; b++) replicates[b] = twoStageReplicate(byPosition, random);
  return { mean, ci: percentile95(replicates), positions: byPosition.length, n: byPosition.reduce((sum, s) => sum + s.length, 0) };
}

/**
 * The gap filler − real with the same two-stage scheme. The authors bootstrap each arm with its
 * own generator started from the same seed, so when both arms have the same positions and counts
 * the two arms draw the same position and probe indices: the gap replicate is the paired
 * difference. This estimator makes that pairing explicit (one position draw per replicate shared by
 * both arms, each arm then redraws its own scores at the drawn position), and its interval is the
 * percentile interval of the replicate differences; the authors report no interval on the gap.
 * Positions are those with scores in both arms.
 */
export function gapClusterBootstrap(
  positions: ReadonlyArray<{ real: readonly number[]; filler: readonly number[] }>,
  options: ReferenceOptions = {},
): { estimate: number; ci: [number, number]; positions: number } {
  checkClusters(
    positions.map((p) => p.real),
    'gapClusterBootstrap(real)',
  );
  checkClusters(
    positions.map((p) => p.filler),
    'gapClusterBootstrap(filler)',
  );
  const estimate = meanOfPositionMeans(positions.map((p) => p.filler)) - meanOfPositionMeans(positions.map((p) => p.real));
  const B = options.B ?? 10_000;
  const random = rng(options.seed ?? 42);
  const k = positions.length;
  const replicates = new Float64Array(B);
  const redrawMean = (scores: readonly number[]) => {
    let sum = 0;
    for (let j = 0; j < scores.length; j++) sum += scores[random.int(scores.length)] as number;
    return sum / scores.length;
  };
  for (let b = 0; b < B; b++) {
    let total = 0;
    for (let i = 0; i < k; i++) {
      const drawn = positions[random.int(k)] as { real: readonly number[]; filler: readonly number[] };
      total += redrawMean(drawn.filler) - redrawMean(drawn.real);
    }
    replicates[b] = total / k;
  }
  return { estimate, ci: percentile95(replicates), positions: k };
}

/**
 * Paired sign-flip permutation over per-probe differences as the authors define it: each resample
 * flips every difference's sign with probability ½; two-sided p = share of resamples whose mean is
 * at least as far from zero as the observed mean (no +1 in numerator or denominator, so p can be 0).
 */
export function referenceSignFlip(deltas: readonly number[], options: ReferenceOptions = {}): { mean: number; p: number; n: number } {
  if (deltas.length === 0) throw new StatisticsError('referenceSignFlip: no paired difference');
  for (const d of deltas) if (!Number.isFinite(d)) throw new StatisticsError('referenceSignFlip: a difference is not finite');
  const n = deltas.length;
  const observed = Math.abs(average(deltas));
  const resamples = options.B ?? 10_000;
  const random = rng(options.seed ?? 42);
  // Compare sums, not means, against a tolerance: integer score differences give exactly equal sums
  // whose means could differ in the last bit.
  const observedSum = observed * n;
  const tolerance = 1e-9 * Math.max(1, observedSum);
  let extreme = 0;
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += random.next() < 0.5 ? (deltas[i] as number) : -(deltas[i] as number);
    if (Math.abs(sum) >= observedSum - tolerance) extreme++;
  }
  return { mean: average(deltas), p: extreme / resamples, n };
}

/**
 * A contract contrast at the session level (paper: Wilcoxon signed-rank with a session bootstrap):
 * one pass-rate difference per session; the test is Wilcoxon's signed-rank on those differences,
 * the interval the percentile interval of the mean difference over sessions resampled with
 * replacement.
 */
export function sessionWilcoxon(
  differences: readonly number[],
  options: ReferenceOptions = {},
): { mean: number; ci: [number, number]; p: number; sessions: number; method: string } {
  if (differences.length < 2) throw new StatisticsError(`sessionWilcoxon: ${differences.length} session(s); a session bootstrap needs at least 2`);
  const test = wilcoxonSignedRank(differences);
  const B = options.B ?? 10_000;
  const random = rng(options.seed ?? 42);
  const replicates = new Float64Array(B);
  const k = differences.length;
  for (let b = 0; b < B; b++) {
    let sum = 0;
    for (let i = 0; i < k; i++) sum += differences[random.int(k)] as number;
    replicates[b] = sum / k;
  }
  return { mean: average(differences), ci: percentile95(replicates), p: test.p, sessions: k, method: test.method };
}
