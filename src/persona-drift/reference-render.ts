import type { GapEstimate, Maybe, PersonaReport } from './analysis.js';
import type { ReferenceBlock, ReferencePermutation } from './reference-types.js';
import { fixed as f3, pValue as pv, signed as f2 } from '../report/format.js';

/**
 * The paper's procedure beside the calibrated one, as rows (document.ts makes the report's section
 * of them). Only runs with a `reference` block get the section.
 */

const interval = (estimate: number, ci: readonly [number, number], format = f2) => `${format(estimate)} [${format(ci[0])}, ${format(ci[1])}]`;

export interface ReferenceComparisonRow {
  target: string;
  quantity: string;
  calibrated: string;
  paper: string;
}

export const VERDICT_NOTE =
  "The verdict uses echolens's calibrated procedure; the paper's procedure is shown beside it wherever the two differ, so a published number can be checked against the same data.";

export const SAME_IN_BOTH = [
  'compaction equivalence: TOST at the configured margin (paper: ±0.08) on post − pre changes in Δ',
  'onset: the first position whose probe-level test survives Holm across positions (App. N)',
  'variance decomposition: random-effects split of the log verbosity ratio between and within sessions',
  'verbosity and compliance: compliance gap (pp), median and conditional length ratios, judge-free',
];

const isGap = (g: Maybe<GapEstimate>): g is GapEstimate => !('error' in g);

/** The Holm family an adjusted p belongs to, in words. */
export function familyText(p: ReferencePermutation): string {
  if (p.family === 'headline') return `Holm across targets (headline family, ${p.familySize} tests)`;
  if (p.family === 'content-position-panel') return `Holm across the panel (content-position family, ${p.familySize} tests)`;
  return `Holm within target (${p.familySize} tests)`;
}

/** One row per quantity where the procedures differ, per target. */
export function referenceComparison(report: PersonaReport, reference: ReferenceBlock): ReferenceComparisonRow[] {
  const rows: ReferenceComparisonRow[] = [];
  for (const target of report.design.targets) {
    const drift = report.drift.find((d) => d.target === target && d.judge === reference.judge);
    const gap = reference.gap.find((g) => g.target === target);
    const perm = reference.permutation.find((p) => p.target === target && p.contrast === 'filler - real');
    if (drift || gap) {
      const calibrated = drift
        ? isGap(drift.gap)
          ? `${interval(drift.gap.estimate, drift.gap.ci)} (t interval over ${drift.gap.units} ${drift.gap.level}s)${'error' in drift.signFlip ? '' : `; sign-flip p ${pv(drift.signFlip.p)}, Holm across targets ${pv(drift.signFlip.pHolm)}`}`
          : `n/a (${drift.gap.error})`
        : 'n/a';
      const paper = gap
        ? `${interval(gap.estimate, gap.ci)} (two-stage position bootstrap, B = ${reference.B})${perm ? `; permutation p ${pv(perm.p)}, ${familyText(perm)} ${pv(perm.pHolm)}` : ''}`
        : 'n/a';
      rows.push({ target, quantity: 'drift gap Δ = filler − real', calibrated, paper });
    }
    for (const arm of ['real', 'filler'] as const) {
      const r = reference.arms.find((a) => a.target === target && a.arm === arm);
      if (!r) continue;
      const cal = drift && isGap(drift.gap) ? drift.gap[arm] : null;
      rows.push({
        target,
        quantity: `${arm} arm mean`,
        calibrated: cal ? interval(cal.estimate, cal.ci, f3) : 'n/a',
        paper: `${interval(r.mean, r.ci, f3)} (${r.positions} positions, ${r.n} scores)`,
      });
    }
    for (const c of reference.contracts.filter((x) => x.target === target)) {
      const cal = report.contractContrasts.find(
        (x) => x.target === target && x.item === c.item && x.contrast === c.contrast && x.systemPrompt === c.systemPrompt && x.distance === c.distance,
      );
      rows.push({
        target,
        quantity: `contract ${c.item}: ${c.contrast} (pass rate)`,
        calibrated:
          cal && isGap(cal.difference)
            ? `${interval(cal.difference.estimate, cal.difference.ci)}; sign-flip p ${'error' in cal.signFlip ? 'n/a' : pv(cal.signFlip.p)}, Holm ${cal.pHolm === null ? 'n/a' : pv(cal.pHolm)}`
            : 'n/a',
        paper: `${interval(c.mean, c.ci)} (session bootstrap, ${c.sessions} sessions); Wilcoxon p ${pv(c.p)}, Holm within target ${pv(c.pHolm)}`,
      });
    }
  }
  return rows;
}

/** The paper's procedure in one paragraph. */
export const procedureText = (reference: ReferenceBlock) =>
  `Paper's procedure (ContextEcho): judge ${reference.judge ?? 'none'}, probe category ${reference.category} for the arm means and the gap; two-stage position-clustered bootstrap (positions, then probe scores within each position), statistic = mean of position means, B = ${reference.B}, 2.5/97.5 percentiles; paired sign-flip permutation over per-probe differences (all categories), ${reference.B} resamples, p without +1; Holm families: filler − real across targets (headline), content-position contrasts against scratch across the panel (all targets × conditions) and within target. Unusable judgements (the authors' −1) ${reference.minusOne === 'keep' ? 'enter the plotted means as −1, as in their figures' : 'are left out of every mean'}.`;
