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
  /** Each run's own estimate over all its units, as its report shows it (`a` / `b` are on the shared units). */
  ownA: string;
  ownB: string;
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
        ownA: text.ownA,
        ownB: text.ownB,
        units: 'error' in row.result ? null : row.result.clusters,
      };
    }),
  );
}

const cell = markdownText;

/**
 * What the compare table's columns are (CLI and viewer). The difference rests on the units both runs
 * share, so A and B are shown twice: on those units (what B − A is of) and as each run's own
 * estimate over all its units (the figure its own report shows); they differ when a run has units
 * the other lacks.
 */
export const COMPARE_CAPTION =
  'B − A with a 95% interval from a paired bootstrap over the design units both runs share; "shared units" = each run\'s statistic recomputed on those units (what the difference is of), "own estimate" = each run\'s estimate over all its units, as its own report shows it';

const verdictText = (v: ReportVerdict) => `${v.verdict.toUpperCase()}${v.simulated ? ' (SIMULATED models)' : ''}`;

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
      `${COMPARE_CAPTION} (B = ${p.comparison.B}, seed ${p.comparison.seed}).`,
      '',
      '| statistic | subject | A, shared units | B, shared units | B − A [95% CI] | shared units | A, own estimate | B, own estimate |',
      '|---|---|---|---|---|---|---|---|',
    );
    const rows = compareRows([p]);
    if (rows.length === 0) lines.push('| — | the runs have no headline statistic in common | — | — | — | — | — | — |');
    for (const r of rows) {
      lines.push(
        `| ${cell(r.statistic)} | ${cell(r.subject)} | ${r.a} | ${r.b} | ${cell(r.difference)} | ${r.units === null ? '—' : `${r.units} ${r.unit}s`} | ${r.ownA} | ${r.ownB} |`,
      );
    }
    lines.push('');
  }
  return `${lines.join('\n')}`;
}
