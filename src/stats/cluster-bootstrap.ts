import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { getOrInsert } from '../core/get-or-insert.js';
import { type BootstrapResult, percentileBootstrap } from './bootstrap.js';
import { type ResamplingOptions, resolveResampling } from './resampling-common.js';
import { rng } from './rng.js';

export type ClusterKey = string | number;

export interface ClusterBootstrapOptions<T> extends ResamplingOptions {
  /**
   * The cluster a row belongs to (question for memory drift, position or session for persona
   * drift): a function of the row, or the name of a row field holding the key.
   */
  cluster: ((row: T, index: number) => ClusterKey) | (keyof T & string);
  /**
   * The statistic, evaluated on the original rows and on each replicate's rows. The replicate
   * array is a buffer reused across replicates — read it, do not keep it.
   */
  statistic: (rows: readonly T[]) => number;
}

export interface ClusterBootstrapResult extends BootstrapResult {
  nClusters: number;
}

/**
 * Groups rows by cluster key, in order of first appearance. Keys must be strings or finite
 * numbers; the number 1 and the string '1' are different clusters.
 */
export function groupByCluster<T>(rows: readonly T[], cluster: (row: T, index: number) => ClusterKey, argument: string): T[][] {
  const groups = new Map<ClusterKey, T[]>();
  rows.forEach((row, i) => {
    const key = cluster(row, i);
    if (typeof key === 'number' ? !Number.isFinite(key) : typeof key !== 'string') {
      throw new InvalidArgumentError(`${argument}[${i}]`, `cluster key must be a string or a finite number, got ${String(key)}`);
    }
    getOrInsert(groups, key, () => []).push(row);
  });
  return [...groups.values()];
}

/**
 * Cluster (block) percentile bootstrap: each replicate draws as many clusters as there are,
 * with replacement, concatenates all rows of the drawn clusters (a cluster drawn twice
 * contributes its rows twice) and recomputes the statistic. This keeps the within-cluster
 * dependence that a row-level bootstrap would break.
 */
export function clusterBootstrap<T>(rows: readonly T[], options: ClusterBootstrapOptions<T>): ClusterBootstrapResult {
  if (!Array.isArray(rows)) throw new InvalidArgumentError('rows', 'expected an array of rows');
  if (rows.length === 0) throw new StatisticsError('clusterBootstrap: rows is empty');
  const clusterOption = options?.cluster;
  if (typeof clusterOption !== 'function' && typeof clusterOption !== 'string') {
    throw new InvalidArgumentError('cluster', 'must be a function (row, index) => cluster key, or a field name');
  }
  const clusterOf = typeof clusterOption === 'function' ? clusterOption : (row: T) => (row as Record<string, unknown>)[clusterOption] as ClusterKey;
  if (typeof options.statistic !== 'function') {
    throw new InvalidArgumentError('statistic', 'must be a function (rows) => number');
  }
  const settings = resolveResampling(options, 'clusterBootstrap');
  const groups = groupByCluster(rows, clusterOf, 'rows');
  const k = groups.length;
  if (k < 2) {
    throw new StatisticsError('clusterBootstrap: all rows are in one cluster; resampling clusters needs at least 2');
  }
  const estimate = options.statistic(rows);
  if (!Number.isFinite(estimate)) {
    throw new StatisticsError(`clusterBootstrap: the statistic on the original rows is ${estimate}`);
  }
  const random = rng(settings.seed);
  const raw = new Float64Array(settings.B);
  const drawn: T[] = [];
  for (let b = 0; b < settings.B; b++) {
    drawn.length = 0;
    for (let c = 0; c < k; c++) {
      for (const row of groups[random.int(k)] as T[]) drawn.push(row);
    }
    raw[b] = options.statistic(drawn);
  }
  return { ...percentileBootstrap(estimate, raw, settings, 'clusterBootstrap'), nClusters: k };
}
