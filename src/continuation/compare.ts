import type { AnalyzedRun } from '../experiment/audit.js';
import type { AuditSeries, CompareRunsOptions, RunDifference } from '../report/compare-types.js';
import { attempt, matchSubjects, sharedUnits } from '../report/compare-units.js';
import { meanOfClusterMeans, pairedBootstrapDifference } from '../stats/paired-bootstrap.js';
import type { ContinuationCollected, ContinuationReport } from './run.js';
import { byCutpoint, type ContinuationAnalysis, pairedDifferences } from './analysis.js';

/** `echolens compare` for continuation runs: recent − cross argument fidelity over the cutpoints both runs share (docs/statistics.md, "Comparing runs"). */

function continuationDiffs(collected: ContinuationCollected, target: string, arms: ContinuationAnalysis['primary'], itt: boolean): Map<string, number> {
  const pairs = pairedDifferences(byCutpoint(collected.observations.filter((o) => o.target === target)), arms.a, arms.b);
  return new Map(itt ? pairs.itt : pairs.completeCase);
}

/** A run's own estimate of the contrast (its report's figure over all its cutpoints), null when it has none. */
function ownContrast(contrasts: ContinuationReport['analysis']['targets'][number]['contrasts'], arms: { a: string; b: string }, itt: boolean): number | null {
  const contrast = contrasts.find((c) => c.a === arms.a && c.b === arms.b);
  return (itt ? contrast?.itt.mean : contrast?.completeCase.mean) ?? null;
}

export function continuationCompare(
  a: AnalyzedRun<ContinuationCollected, ContinuationReport>,
  b: AnalyzedRun<ContinuationCollected, ContinuationReport>,
  options: Required<CompareRunsOptions>,
): RunDifference[] {
  const arms = a.report.analysis.primary;
  const rows: RunDifference[] = [];
  for (const [ta, tb, subject] of matchSubjects(a.report.analysis.targets, b.report.analysis.targets, (t) => t.target)) {
    for (const [name, itt] of [
      ['complete case', false],
      ['intention to treat', true],
    ] as const) {
      const units = sharedUnits(continuationDiffs(a.collected, ta.target, arms, itt), continuationDiffs(b.collected, tb.target, arms, itt), (c) => c);
      rows.push({
        statistic: `argument fidelity ${arms.a} − ${arms.b} · ${name}`,
        subject,
        unit: 'cutpoint',
        scale: 'number',
        result: attempt(() => pairedBootstrapDifference(units, (clusters) => meanOfClusterMeans(clusters.map((c) => [...c])), options)),
        own: { a: ownContrast(ta.contrasts, arms, itt), b: ownContrast(tb.contrasts, arms, itt) },
      });
    }
  }
  return rows;
}

/**
 * Drift over time for continuation runs: each target's primary contrast (complete case), with the
 * per-cutpoint differences as unit values, as `echolens history` and `compare --baseline` read them.
 */
export function continuationOverTime(analyzed: AnalyzedRun<ContinuationCollected, ContinuationReport>): AuditSeries[] {
  const arms = analyzed.report.analysis.primary;
  return analyzed.report.analysis.targets.map((t) => {
    const contrast = t.contrasts.find((c) => c.a === arms.a && c.b === arms.b);
    const cc = contrast?.completeCase;
    return {
      statistic: `argument fidelity ${arms.a} − ${arms.b} · complete case`,
      subject: t.target,
      unit: 'cutpoint',
      scale: 'number' as const,
      estimate: cc?.mean ?? null,
      ci: cc?.ci ?? null,
      units: [...continuationDiffs(analyzed.collected, t.target, arms, false)].map(([key, value]) => ({ key, cluster: key, value })),
    };
  });
}
