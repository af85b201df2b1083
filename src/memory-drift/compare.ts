import type { AnalyzedRun } from '../experiment/audit.js';
import type { AuditSeries, CompareRunsOptions, RunDifference } from '../report/compare-types.js';
import { attempt, matchSubjects, sharedUnits } from '../report/compare-units.js';
import { pairedBootstrapDifference } from '../stats/paired-bootstrap.js';
import type { MemoryMetric, MemoryReport } from './analysis.js';
import { collectionObservations, type MemoryCollection } from './observations.js';
import { NO_PERTURBATION } from './perturbations.js';
import { getOrInsert } from '../core/get-or-insert.js';

/** `echolens compare` for memory runs: each tier's DTW/SRI elevation over the questions both runs share (docs/statistics.md, "Comparing runs"). */

type Sums = { tn: number; ts: number; fn: number; fs: number };

function memoryQuestionSums(collection: MemoryCollection, target: string, metric: MemoryMetric, tier: string): Map<string, Sums> {
  const observations = collectionObservations(collection, collection.config.analysis.pairing);
  const out = new Map<string, Sums>();
  for (const o of observations) {
    const value = o[metric];
    if (o.target !== target || o.status !== 'scored' || value === null) continue;
    const floor = o.condition === NO_PERTURBATION;
    if (!floor && o.tier !== tier) continue;
    const s = getOrInsert(out, o.question, () => ({ tn: 0, ts: 0, fn: 0, fs: 0 }));
    s[floor ? 'fn' : 'tn'] += 1;
    s[floor ? 'fs' : 'ts'] += value;
  }
  return out;
}

/** μ_tier / μ_floor − 1 over every row of the drawn questions (the report's elevation). */
function elevationOf(clusters: readonly (readonly Sums[])[]): number | null {
  let tn = 0;
  let ts = 0;
  let fn = 0;
  let fs = 0;
  for (const c of clusters) {
    for (const s of c) {
      tn += s.tn;
      ts += s.ts;
      fn += s.fn;
      fs += s.fs;
    }
  }
  if (tn === 0 || fn === 0 || !(fs > 0)) return null;
  return ts / tn / (fs / fn) - 1;
}

/** A run's own elevation of a tier (its report's figure), null when the report has none. */
function ownElevation(tiers: MemoryReport['targets'][number]['metrics']['dtw']['tiers'], tier: string): number | null {
  const elevation = tiers.find((t) => t.tier === tier)?.elevation;
  return elevation === undefined || elevation === null || 'error' in elevation ? null : elevation.estimate;
}

export function memoryCompare(
  a: AnalyzedRun<MemoryCollection, MemoryReport>,
  b: AnalyzedRun<MemoryCollection, MemoryReport>,
  options: Required<CompareRunsOptions>,
): RunDifference[] {
  const rows: RunDifference[] = [];
  for (const [ta, tb, subject] of matchSubjects(a.report.targets, b.report.targets, (t) => t.target)) {
    for (const metric of ['dtw', 'sri'] as const) {
      for (const tier of ta.metrics[metric].tiers.map((t) => t.tier)) {
        if (!tb.metrics[metric].tiers.some((t) => t.tier === tier)) continue;
        const units = sharedUnits(memoryQuestionSums(a.collected, ta.target, metric, tier), memoryQuestionSums(b.collected, tb.target, metric, tier), (q) => q);
        rows.push({
          statistic: `${metric.toUpperCase()} elevation over the no-memory floor · ${tier}`,
          subject,
          unit: 'question',
          scale: 'percent',
          result: attempt(() => pairedBootstrapDifference(units, elevationOf, options)),
          own: { a: ownElevation(ta.metrics[metric].tiers, tier), b: ownElevation(tb.metrics[metric].tiers, tier) },
        });
      }
    }
  }
  return rows;
}

/**
 * Drift over time for memory runs: per target, metric and tier, the excess of the tier's mean
 * DTW/SRI over the no-memory floor, question by question (a difference, so that two measurements
 * can be compared unit by unit; the report's elevation is a ratio of pooled means and has no
 * per-question form). The run's own estimate and interval are made from these values by the
 * shared code (report/baseline.ts), as `echolens history` shows them.
 */
export function memoryOverTime(analyzed: AnalyzedRun<MemoryCollection, MemoryReport>): AuditSeries[] {
  const out: AuditSeries[] = [];
  for (const t of analyzed.report.targets) {
    for (const metric of ['dtw', 'sri'] as const) {
      for (const { tier } of t.metrics[metric].tiers) {
        const units = [...memoryQuestionSums(analyzed.collected, t.target, metric, tier)].flatMap(([question, s]) =>
          s.tn > 0 && s.fn > 0 ? [{ key: question, cluster: question, value: s.ts / s.tn - s.fs / s.fn }] : [],
        );
        out.push({
          statistic: `${metric.toUpperCase()} excess over the no-memory floor · ${tier}`,
          subject: t.target,
          unit: 'question',
          scale: 'number',
          estimate: null,
          ci: null,
          units,
        });
      }
    }
  }
  return out;
}
