import { type SignFlipInterval, signFlipInterval } from '../stats/sign-flip-interval.js';
import { mean } from '../stats/distributions.js';
import type { AuditSeries } from './compare-types.js';
import { getOrInsert } from '../core/get-or-insert.js';

/**
 * Drift over time, pure: two measurements of one design compared unit by unit
 * (docs/over-time.md, docs/statistics.md "Change from a baseline"). Each headline statistic an
 * audit's `overTime` member gives is matched by statistic and subject; the design units both runs
 * measured are paired by key; the change is the mean over clusters (the sampled units) of the mean
 * over each cluster's units of latest − baseline, and its interval and p come from one procedure:
 * the sign-flip test over the clusters' changes and the interval that inverts it
 * (stats/sign-flip-interval.ts). When the shared units fall in one cluster only, each unit is
 * its own cluster (as `echolens compare` does with one session).
 */

export interface BaselineOptions {
  /** Interval level (default 0.95); a change is significant when p < 1 − level. */
  level?: number;
  /** Random sign patterns above 16 clusters (default 20,000). */
  B?: number;
  seed?: number;
}

/** What names a series: its statistic, what it is measured on, its unit and how it prints. */
export type SeriesName = Pick<AuditSeries, 'statistic' | 'subject' | 'unit' | 'scale'>;

export interface BaselineRow extends SeriesName {
  /** Each run's statistic on the shared units (mean of cluster means); null when none is shared. */
  baseline: number | null;
  latest: number | null;
  /** latest − baseline with its interval and p, or why it could not be computed. */
  change: SignFlipInterval | { error: string };
  /** Shared units and the clusters the test flips. */
  units: number;
  clusters: number;
}

/** A run's headline as history shows it: the audit's own estimate, else the mean of its units with the sign-flip interval. */
export interface SeriesHeadline extends SeriesName {
  estimate: number | null;
  ci: [number, number] | null;
  units: number;
  /** `report`: the audit's own figure; `units`: made here from the unit values. */
  source: 'report' | 'units';
}

const seriesKey = (s: Pick<AuditSeries, 'statistic' | 'subject'>) => `${s.statistic}\u0000${s.subject}`;

/** Means per cluster, clusters sorted; one cluster only → each unit its own cluster. */
function clusterMeans(units: ReadonlyArray<{ cluster: string; value: number }>): number[] {
  const distinct = new Set(units.map((u) => u.cluster));
  const byCluster = new Map<string, number[]>();
  units.forEach((u, i) => {
    const cluster = distinct.size >= 2 ? u.cluster : String(i);
    getOrInsert(byCluster, cluster, () => []).push(u.value);
  });
  return [...byCluster.keys()].sort().map((k) => mean(byCluster.get(k) as number[]));
}

const meanOrNull = (xs: readonly number[]) => (xs.length === 0 ? null : mean(xs));

export function seriesHeadline(series: AuditSeries, options: BaselineOptions = {}): SeriesHeadline {
  const base = { statistic: series.statistic, subject: series.subject, unit: series.unit, scale: series.scale, units: series.units.length };
  if (series.estimate !== null) return { ...base, estimate: series.estimate, ci: series.ci ? [series.ci[0], series.ci[1]] : null, source: 'report' };
  const means = clusterMeans(series.units);
  if (means.length === 0) return { ...base, estimate: null, ci: null, source: 'units' };
  const r = signFlipInterval(means, options);
  return { ...base, estimate: r.estimate, ci: Number.isFinite(r.ci[0]) && Number.isFinite(r.ci[1]) ? r.ci : null, source: 'units' };
}

export function compareSeries(baseline: readonly AuditSeries[], latest: readonly AuditSeries[], options: BaselineOptions = {}): BaselineRow[] {
  const before = new Map(baseline.map((s) => [seriesKey(s), s]));
  const rows: BaselineRow[] = [];
  for (const now of latest) {
    const then = before.get(seriesKey(now));
    if (!then) continue;
    const thenByKey = new Map(then.units.map((u) => [u.key, u]));
    const shared = now.units.filter((u) => thenByKey.has(u.key)).sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
    const pairs = shared.map((u) => ({ cluster: u.cluster, before: (thenByKey.get(u.key) as { value: number }).value, after: u.value }));
    const deltas = clusterMeans(pairs.map((p) => ({ cluster: p.cluster, value: p.after - p.before })));
    const row: BaselineRow = {
      statistic: now.statistic,
      subject: now.subject,
      unit: now.unit,
      scale: now.scale,
      baseline: meanOrNull(clusterMeans(pairs.map((p) => ({ cluster: p.cluster, value: p.before })))),
      latest: meanOrNull(clusterMeans(pairs.map((p) => ({ cluster: p.cluster, value: p.after })))),
      change: { error: 'no design unit measured in both runs' },
      units: pairs.length,
      clusters: deltas.length,
    };
    if (deltas.length >= 1) row.change = signFlipInterval(deltas, options);
    rows.push(row);
  }
  return rows;
}

/** A row fails the baseline gate when its change is significant (p < 1 − level, i.e. 0 outside the interval) and |change| > maxChange. */
export function changeFails(row: BaselineRow, maxChange: number): boolean {
  if ('error' in row.change) return false;
  const alpha = 1 - row.change.level;
  return row.change.p < alpha && Math.abs(row.change.estimate) > maxChange;
}

/** "+0.42 [+0.10, +0.80], p = 0.004 (exact, 12 sessions)" in the row's scale. */
export function changeText(row: BaselineRow): string {
  if ('error' in row.change) return `n/a (${row.change.error})`;
  const c = row.change;
  const f = (x: number) => {
    if (!Number.isFinite(x)) return x > 0 ? '+∞' : '−∞';
    const v = row.scale === 'percent' ? 100 * x : x;
    return `${v >= 0 ? '+' : ''}${v.toFixed(row.scale === 'percent' ? 0 : 2)}${row.scale === 'percent' ? ' pp' : ''}`;
  };
  const p = c.p < 0.001 ? c.p.toExponential(1) : c.p.toFixed(3);
  return `${f(c.estimate)} [${f(c.ci[0])}, ${f(c.ci[1])}], p = ${p} (${c.method}, ${row.clusters} ${row.clusters === 1 ? 'unit' : 'units'})`;
}
