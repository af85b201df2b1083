import { StatisticsError } from '../core/errors.js';
import { mean, tQuantile } from './distributions.js';
import { rng } from './rng.js';

/**
 * B − A difference of a statistic of two runs measured on the same design units (pure).
 *
 * Each shared unit carries the value it has in run A and in run B. Units are grouped in
 * clusters (the sampled unit: a session, a position, a question, a cutpoint); every bootstrap
 * replicate draws as many clusters as there are, with replacement, and recomputes the
 * statistic of A and of B from the same drawn clusters, so what the two runs share (the
 * difficulty of a question, the content of a position) cancels in the difference. The interval
 * is the difference ± t(df = clusters − 1) × the bootstrap standard error (scaled by
 * √(k/(k−1))), which keeps its coverage with the few clusters a run has, where a percentile
 * interval is too narrow; the
 * choice is written in docs/statistics.md ("Comparing runs").
 */

export interface PairedUnit<V> {
  /** The cluster the unit belongs to (the unit itself when units are independent). */
  cluster: string;
  a: V;
  b: V;
}

export interface PairedDifference {
  a: number;
  b: number;
  /** b − a on the full data. */
  difference: number;
  ci: [number, number];
  /** Bootstrap standard error of the difference. */
  se: number;
  level: number;
  units: number;
  clusters: number;
  B: number;
  /** Replicates where either statistic was undefined (left out of the SE). */
  invalidReplicates: number;
  seed: number;
}

export interface PairedBootstrapOptions {
  B?: number;
  seed?: number;
  level?: number;
}

/** Statistic of one run over drawn clusters (each a list of unit values); null = undefined. */
export type ClusterStatistic<V> = (clusters: readonly (readonly V[])[]) => number | null;

export function pairedBootstrapDifference<V>(
  units: readonly PairedUnit<V>[],
  statistic: ClusterStatistic<V>,
  options: PairedBootstrapOptions = {},
): PairedDifference {
  const B = options.B ?? 2000;
  const seed = options.seed ?? 42;
  const level = options.level ?? 0.95;
  if (!Number.isInteger(B) || B < 50) throw new StatisticsError(`paired bootstrap: B must be an integer ≥ 50, got ${B}`);
  if (!(level > 0 && level < 1)) throw new StatisticsError(`paired bootstrap: level must be in (0, 1), got ${level}`);
  const byCluster = new Map<string, PairedUnit<V>[]>();
  for (const u of units) {
    const list = byCluster.get(u.cluster);
    if (list) list.push(u);
    else byCluster.set(u.cluster, [u]);
  }
  const clusters = [...byCluster.keys()].sort().map((k) => byCluster.get(k) as PairedUnit<V>[]);
  const k = clusters.length;
  if (k < 2) throw new StatisticsError(`the runs share ${k} design unit${k === 1 ? '' : 's'}; a difference with an interval needs at least 2`);
  const sideA = clusters.map((c) => c.map((u) => u.a));
  const sideB = clusters.map((c) => c.map((u) => u.b));
  const a = statistic(sideA);
  const b = statistic(sideB);
  if (a === null || b === null || !Number.isFinite(a) || !Number.isFinite(b)) throw new StatisticsError('the statistic is undefined on one of the runs');
  const random = rng(seed);
  const draw = new Int32Array(k);
  const drawnA: V[][] = new Array(k);
  const drawnB: V[][] = new Array(k);
  let n = 0;
  let sum = 0;
  let sumSq = 0;
  for (let r = 0; r < B; r++) {
    random.fillInt(draw, k);
    for (let i = 0; i < k; i++) {
      const c = draw[i] as number;
      drawnA[i] = sideA[c] as V[];
      drawnB[i] = sideB[c] as V[];
    }
    const ra = statistic(drawnA);
    const rb = statistic(drawnB);
    if (ra === null || rb === null || !Number.isFinite(ra) || !Number.isFinite(rb)) continue;
    const d = rb - ra;
    n += 1;
    sum += d;
    sumSq += d * d;
  }
  if (n < B * 0.99) throw new StatisticsError(`${B - n} of ${B} bootstrap replicates left the statistic undefined; the difference has no interval`);
  const meanD = sum / n;
  // The bootstrap SE of a mean is the plug-in SE (divisor k); × √(k/(k−1)) makes it the usual one,
  // so for a mean of cluster values the interval is the paired t interval.
  const se = Math.sqrt(Math.max(0, (sumSq - n * meanD * meanD) / (n - 1))) * Math.sqrt(k / (k - 1));
  const half = tQuantile(1 - (1 - level) / 2, k - 1) * se;
  const difference = b - a;
  return { a, b, difference, ci: [difference - half, difference + half], se, level, units: units.length, clusters: k, B, invalidReplicates: B - n, seed };
}

/** Mean of the cluster means (clusters weighted equally, units equally within a cluster). */
export function meanOfClusterMeans(clusters: readonly (readonly number[] | Float64Array)[]): number | null {
  if (clusters.length === 0 || clusters.some((c) => c.length === 0)) return null;
  let total = 0;
  for (const c of clusters) total += mean(c);
  return total / clusters.length;
}
