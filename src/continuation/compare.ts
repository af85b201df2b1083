import type { AnalyzedRun } from '../experiment/audit.js';
import type { CompareRunsOptions, RunDifference } from '../report/compare-types.js';
import { attempt, matchSubjects, sharedUnits } from '../report/compare-units.js';
import { meanOfClusterMeans, pairedBootstrapDifference } from '../stats/paired-bootstrap.js';
import type { ContinuationCollected, ContinuationReport } from './run.js';

/** `echolens compare` for continuation runs: recent − cross argument fidelity over the cutpoints both runs share (docs/statistics.md, "Comparing runs"). */

function continuationDiffs(collected: ContinuationCollected, target: string, arms: { a: string; b: string }, itt: boolean): Map<string, number> {
  const byCut = new Map<string, Map<string, (typeof collected.observations)[number]>>();
  for (const o of collected.observations) {
    if (o.target !== target) continue;
    let m = byCut.get(o.cutpoint);
    if (!m) {
      m = new Map();
      byCut.set(o.cutpoint, m);
    }
    m.set(o.arm, o);
  }
  const score = (o: (typeof collected.observations)[number]) => (o.status === 'call' && o.fidelity !== null ? o.fidelity : 0);
  const out = new Map<string, number>();
  for (const [cut, m] of byCut) {
    const x = m.get(arms.a);
    const y = m.get(arms.b);
    if (!x?.generated || !y?.generated) continue;
    if (itt) out.set(cut, score(x) - score(y));
    else if (x.status === 'call' && y.status === 'call' && x.fidelity !== null && y.fidelity !== null) out.set(cut, x.fidelity - y.fidelity);
  }
  return out;
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
      });
    }
  }
  return rows;
}
