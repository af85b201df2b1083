import type { PairedEstimate } from './analysis.js';
import type { ContinuationReport } from './run.js';
import { signed } from '../report/format.js';

/**
 * Markdown of `procedure: reference` (pure): the authors' continuation scoring next to the
 * calibrated one, for every arm and contrast, marking where the two differ. The verdict (gate,
 * headline) is the calibrated analysis's.
 */

const fixed = (x: number | null, digits = 3) => (x === null ? '—' : x.toFixed(digits));
const pText = (p: number | null) => (p === null ? '—' : p < 0.001 ? '< 0.001' : p.toFixed(3));

function estimate(e: PairedEstimate): string {
  return `${signed(e.mean, 3, '—')} ${e.ci ? `[${signed(e.ci[0], 3, '—')}, ${signed(e.ci[1], 3, '—')}]` : ''} (n = ${e.n}, p = ${pText(e.p)})`;
}

const differs = (a: number | null, b: number | null) => (a === null) !== (b === null) || (a !== null && b !== null && Math.abs(a - b) > 1e-12);

export function renderReferenceContinuationMarkdown(report: ContinuationReport): string {
  const reference = report.reference;
  if (reference === null) return '';
  const lines: string[] = ['## The authors’ scoring (procedure: reference)', ''];
  lines.push(
    `Scored as the authors' continuation runner scores it: ${reference.scoring}. ` +
      'The verdict, the headline and the gate use the calibrated fidelity above; rows marked **differs** are where the two disagree.',
    '',
  );
  for (const t of reference.targets) {
    const calibrated = report.analysis.targets.find((c) => c.target === t.target);
    lines.push(`### ${t.target}`, '');
    lines.push('| arm | generated | tool match (M1) | argument similarity of matching calls (M2) | mean fidelity, calibrated | mean fidelity, authors | |');
    lines.push('|---|---|---|---|---|---|---|');
    for (const arm of t.arms) {
      const mine = calibrated?.attrition.find((a) => a.arm === arm.arm)?.meanFidelity ?? null;
      const theirs = t.analysis.attrition.find((a) => a.arm === arm.arm)?.meanFidelity ?? null;
      lines.push(
        `| ${arm.arm} | ${arm.generated} | ${arm.toolMatches} (${arm.toolMatchRate === null ? '—' : `${(100 * arm.toolMatchRate).toFixed(0)}%`}) | ${fixed(arm.argSimilarity)} | ${fixed(mine)} | ${fixed(theirs)} | ${differs(mine, theirs) ? '**differs**' : 'same'} |`,
      );
    }
    lines.push('', '| contrast | analysis | Δ fidelity, calibrated [95% CI] | Δ fidelity, authors [95% CI] | |', '|---|---|---|---|---|');
    for (const c of t.analysis.contrasts) {
      const mine = calibrated?.contrasts.find((x) => x.a === c.a && x.b === c.b);
      if (!mine) continue;
      for (const kind of ['completeCase', 'itt'] as const) {
        const diff = differs(mine[kind].mean, c[kind].mean) || differs(mine[kind].p, c[kind].p);
        lines.push(
          `| ${c.a} − ${c.b}${c.primary ? ' (primary)' : ''} | ${kind === 'itt' ? 'ITT' : 'complete case'} | ${estimate(mine[kind])} | ${estimate(c[kind])} | ${diff ? '**differs**' : 'same'} |`,
        );
      }
    }
    lines.push('');
  }
  return lines.join('\n');
}
