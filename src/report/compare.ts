import type { ReportVerdict } from '../gate/verdict.js';
import { differenceText, type RunComparison } from './compare-runs.js';
import { markdownText } from './markdown-text.js';

/**
 * `echolens compare a.db b.db`: runs of the same audit in two stores, number by number, with
 * the B − A difference of each headline statistic and its paired bootstrap interval over the
 * design units both runs share (compare-runs.ts). Rendering only: pure.
 */

export interface ComparedPair {
  audit: string;
  title: string;
  a: { store: string; run: string; name: string; verdict: ReportVerdict };
  b: { store: string; run: string; name: string; verdict: ReportVerdict };
  comparison: RunComparison;
}

export interface CompareRow {
  audit: string;
  statistic: string;
  subject: string;
  unit: string;
  a: string;
  b: string;
  /** B − A with its interval (text). */
  difference: string;
  /** Shared units the interval rests on (null when it could not be computed). */
  units: number | null;
}

export function compareRows(pairs: readonly ComparedPair[]): CompareRow[] {
  return pairs.flatMap((p) =>
    p.comparison.rows.map((row) => {
      const text = differenceText(row);
      return {
        audit: p.audit,
        statistic: row.statistic,
        subject: row.subject,
        unit: row.unit,
        a: text.a,
        b: text.b,
        difference: text.difference,
        units: 'error' in row.result ? null : row.result.clusters,
      };
    }),
  );
}

const cell = markdownText;

const verdictText = (v: ReportVerdict) => `${v.verdict === 'fail' ? 'FAIL' : 'PASS'}${v.simulated ? ' (SIMULATED models)' : ''}`;

export function renderCompareMarkdown(pairs: readonly ComparedPair[]): string {
  const lines = ['# echolens compare', ''];
  if (pairs.some((p) => p.a.verdict.simulated || p.b.verdict.simulated)) {
    lines.push('> **Simulated models** (`sim:`) in at least one side: those numbers measure no real model.', '');
  }
  for (const p of pairs) {
    lines.push(
      `## ${p.title}`,
      '',
      `- A: ${p.a.name} (run ${p.a.run} in ${p.a.store}); verdict ${verdictText(p.a.verdict)}`,
      `- B: ${p.b.name} (run ${p.b.run} in ${p.b.store}); verdict ${verdictText(p.b.verdict)}`,
      '',
      `B − A with a 95% interval from a paired bootstrap over the design units both runs share (B = ${p.comparison.B}, seed ${p.comparison.seed}); A and B are each run's own estimate.`,
      '',
      '| statistic | subject | A | B | B − A [95% CI] | shared units |',
      '|---|---|---|---|---|---|',
    );
    const rows = compareRows([p]);
    if (rows.length === 0) lines.push('| — | the runs have no headline statistic in common | — | — | — | — |');
    for (const r of rows) lines.push(`| ${cell(r.statistic)} | ${cell(r.subject)} | ${r.a} | ${r.b} | ${cell(r.difference)} | ${r.units === null ? '—' : `${r.units} ${r.unit}s`} |`);
    lines.push('');
  }
  return `${lines.join('\n')}`;
}
