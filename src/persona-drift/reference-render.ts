import { markdownText } from '../report/markdown-text.js';
import { html, type RawHtml, table } from '../report/html.js';
import type { GapEstimate, Maybe, PersonaReport } from './analysis.js';
import type { ReferenceBlock, ReferencePermutation } from './reference-analysis.js';
import { fixed as f3, pValue as pv, signed as f2 } from '../report/format.js';

/**
 * The paper's procedure beside the calibrated one, for Markdown and HTML. Both renderings are
 * built from the same rows, so they show the same numbers. Only runs with a `reference` block get
 * the section.
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

const SAME_IN_BOTH = [
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

const procedureText = (reference: ReferenceBlock) =>
  `Paper's procedure (ContextEcho): judge ${reference.judge ?? 'none'}, probe category ${reference.category} for the arm means and the gap; two-stage position-clustered bootstrap (positions, then probe scores within each position), statistic = mean of position means, B = ${reference.B}, 2.5/97.5 percentiles; paired sign-flip permutation over per-probe differences (all categories), ${reference.B} resamples, p without +1; Holm families: filler − real across targets (headline), content-position contrasts against scratch across the panel (all targets × conditions) and within target. Unusable judgements (the authors' −1) ${reference.minusOne === 'keep' ? 'enter the plotted means as −1, as in their figures' : 'are left out of every mean'}.`;

export function referenceMarkdown(report: PersonaReport): string[] {
  const reference = report.reference;
  if (!reference) return [];
  const cell = markdownText;
  const out: string[] = ["## The paper's procedure beside the calibrated one", '', VERDICT_NOTE, '', cell(procedureText(reference)), ''];
  const rows = referenceComparison(report, reference);
  out.push(
    rows.length === 0
      ? '_No cell both procedures can estimate._'
      : [
          '| target | quantity | calibrated (verdict) | paper |',
          '| --- | --- | --- | --- |',
          ...rows.map((r) => `| ${cell(r.target)} | ${cell(r.quantity)} | ${cell(r.calibrated)} | ${cell(r.paper)} |`),
        ].join('\n'),
    '',
  );
  const other = reference.permutation.filter((p) => p.contrast !== 'filler - real');
  if (other.length > 0) {
    out.push(
      'Paired permutation against scratch (paper):',
      '',
      '| target | contrast | mean | p | p (Holm, family) | p (Holm within target) |',
      '| --- | --- | --- | --- | --- | --- |',
    );
    for (const p of other)
      out.push(
        `| ${cell(p.target)} | ${cell(p.contrast)} | ${f2(p.mean)} | ${pv(p.p)} | ${pv(p.pHolm)} (${cell(familyText(p))}) | ${p.pHolmWithinTarget === undefined ? 'n/a' : pv(p.pHolmWithinTarget)} |`,
      );
    out.push('');
  }
  if (reference.byCategory.length > 0) {
    out.push(
      'Δ per probe category (paper: each arm over its own positions):',
      '',
      '| target | category | real | filler | Δ | positions (real / filler) |',
      '| --- | --- | --- | --- | --- | --- |',
    );
    for (const c of reference.byCategory)
      out.push(
        `| ${cell(c.target)} | ${cell(c.category)} | ${f3(c.real)} | ${f3(c.filler)} | ${f2(c.estimate)} | ${c.positions.real} / ${c.positions.filler} |`,
      );
    for (const c of reference.categoryPanel) out.push(`| drifters (${c.drifters.length}) | ${cell(c.category)} | | | ${f2(c.estimate)} | |`);
    out.push('');
  }
  if (reference.trajectory.length > 0) {
    out.push('Trajectory, all probes (paper):', '', '| target | position | real [95% CI] | filler [95% CI] |', '| --- | --- | --- | --- |');
    for (const t of reference.trajectory) {
      for (const p of t.positions)
        out.push(`| ${cell(t.target)} | ${cell(p.position)} | ${interval(p.real.mean, p.real.ci, f3)} | ${interval(p.filler.mean, p.filler.ci, f3)} |`);
      out.push(`| ${cell(t.target)} | mean of positions | ${f3(t.real)} | ${f3(t.filler)} (Δ ${f2(t.gap)}) |`);
    }
    out.push('');
  }
  const moreArms = reference.arms.filter((a) => a.arm !== 'real' && a.arm !== 'filler');
  if (moreArms.length > 0) {
    out.push('Other arms, mean of position means (paper):', '', '| target | arm | mean [95% CI] | positions | n |', '| --- | --- | --- | --- | --- |');
    for (const a of moreArms) out.push(`| ${cell(a.target)} | ${cell(a.arm)} | ${interval(a.mean, a.ci, f3)} | ${a.positions} | ${a.n} |`);
    out.push('');
  }
  if (reference.compliance.length > 0) {
    out.push(
      'S2 compliance audit (paper; pairs of real and filler at the same position and paraphrase):',
      '',
      '| target / session | pairs | real pass | filler pass | gap (pp) | length ratio (all) | length ratio (both comply) |',
      '| --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const c of reference.compliance) {
      const who = c.target === null ? `session ${c.session}, all targets` : c.target;
      out.push(
        `| ${cell(who)} | ${c.pairs} | ${c.real.pass} | ${c.filler.pass} | ${f2(c.gapPp)} | ${c.rawRatio === null ? 'n/a' : `${c.rawRatio.toFixed(2)}× (${c.rawPairs})`} | ${c.conditionalRatio === null ? 'n/a' : `${c.conditionalRatio.toFixed(2)}× (${c.conditionalPairs})`} |`,
      );
    }
    out.push('');
  }
  if (reference.anchorVariants.length > 0) {
    out.push(
      'Anchor variants (paper; verbosity ratio against filler without and with the anchor, attenuation):',
      '',
      '| variant | target | position | ratio, no anchor | ratio, anchor | attenuation |',
      '| --- | --- | --- | --- | --- | --- |',
    );
    for (const a of reference.anchorVariants)
      out.push(
        `| ${cell(a.variant)} | ${cell(a.target)} | ${cell(a.position)} | ${a.ratioNoAnchor.toFixed(2)}× | ${a.ratioWithAnchor.toFixed(2)}× | ${a.attenuationPct.toFixed(1)}% |`,
      );
    for (const v of reference.anchorVariantSummary)
      out.push(`| ${cell(v.variant)} | all (${v.cells} cells) | | | | mean ${v.meanAttenuationPct.toFixed(1)}%, ≥ 50 %: ${v.wins}, < 0 %: ${v.failures} |`);
    out.push('');
  }
  for (const n of reference.notComputed) out.push(`- not computed (paper): ${cell(n.target)} ${cell(n.what)}: ${cell(n.error)}`);
  out.push('Computed the same way in both procedures (tables above):', '', ...SAME_IN_BOTH.map((s) => `- ${s}`), '');
  return out;
}

export function referenceHtml(report: PersonaReport): RawHtml | null {
  const reference = report.reference;
  if (!reference) return null;
  const rows = referenceComparison(report, reference);
  const other = reference.permutation.filter((p) => p.contrast !== 'filler - real');
  return html`<h3 id="persona-reference">The paper's procedure beside the calibrated one</h3>
<p class="note">${VERDICT_NOTE} ${procedureText(reference)}</p>
${table(rows, [
  { header: 'target', value: (r) => r.target },
  { header: 'quantity', value: (r) => r.quantity },
  { header: 'calibrated (verdict)', value: (r) => r.calibrated, numeric: true },
  { header: 'paper', value: (r) => r.paper, numeric: true },
])}
${
  other.length > 0
    ? table(other, [
        { header: 'target', value: (p) => p.target },
        { header: 'contrast (paper)', value: (p) => p.contrast },
        { header: 'mean', value: (p) => f2(p.mean), numeric: true },
        { header: 'p', value: (p) => pv(p.p), numeric: true },
        { header: 'p (Holm, family)', value: (p) => `${pv(p.pHolm)} (${familyText(p)})`, numeric: true },
        { header: 'p (Holm within target)', value: (p) => (p.pHolmWithinTarget === undefined ? 'n/a' : pv(p.pHolmWithinTarget)), numeric: true },
      ])
    : ''
}
${
  reference.byCategory.length > 0
    ? table(reference.byCategory, [
        { header: 'target', value: (c) => c.target },
        { header: 'category (paper: arms over their own positions)', value: (c) => c.category },
        { header: 'real', value: (c) => f3(c.real), numeric: true },
        { header: 'filler', value: (c) => f3(c.filler), numeric: true },
        { header: 'Δ', value: (c) => f2(c.estimate), numeric: true },
        { header: 'positions (real / filler)', value: (c) => `${c.positions.real} / ${c.positions.filler}`, numeric: true },
      ])
    : ''
}
${
  reference.compliance.length > 0
    ? table(reference.compliance, [
        { header: 'S2 compliance (paper): target / session', value: (c) => (c.target === null ? `session ${c.session}, all targets` : c.target) },
        { header: 'pairs', value: (c) => String(c.pairs), numeric: true },
        { header: 'real pass', value: (c) => String(c.real.pass), numeric: true },
        { header: 'filler pass', value: (c) => String(c.filler.pass), numeric: true },
        { header: 'gap (pp)', value: (c) => f2(c.gapPp), numeric: true },
        { header: 'length ratio', value: (c) => (c.rawRatio === null ? 'n/a' : `${c.rawRatio.toFixed(2)}×`), numeric: true },
        {
          header: 'both comply',
          value: (c) => (c.conditionalRatio === null ? 'n/a' : `${c.conditionalRatio.toFixed(2)}× (${c.conditionalPairs})`),
          numeric: true,
        },
      ])
    : ''
}
${
  reference.anchorVariants.length > 0
    ? table(reference.anchorVariants, [
        { header: 'anchor variant (paper)', value: (a) => a.variant },
        { header: 'target', value: (a) => a.target },
        { header: 'position', value: (a) => a.position },
        { header: 'ratio, no anchor', value: (a) => `${a.ratioNoAnchor.toFixed(2)}×`, numeric: true },
        { header: 'ratio, anchor', value: (a) => `${a.ratioWithAnchor.toFixed(2)}×`, numeric: true },
        { header: 'attenuation', value: (a) => `${a.attenuationPct.toFixed(1)}%`, numeric: true },
      ])
    : ''
}
<p class="note">Computed the same way in both procedures: ${SAME_IN_BOTH.join('; ')}.</p>`;
}

/** The calibrated content-position contrasts (both procedures), with the Holm family of each adjusted p. */
export function contentPositionMarkdown(report: PersonaReport): string[] {
  const rows = report.contentPosition ?? [];
  if (rows.length === 0) return [];
  const cell = markdownText;
  const out = [
    '## Content-position contrasts (calibrated)',
    '',
    "Each content condition against scratch at the positions scratch was measured, probes as units (all categories). `p (Holm, panel)` is adjusted across every target × condition of the judge (the paper's panel-wide family); `p (Holm within target)` across the target's conditions.",
    '',
    '| target | judge | contrast | Δ [95% CI] | p | p (Holm, panel) | p (Holm within target) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    const d = r.difference;
    out.push(
      isGap(d)
        ? `| ${cell(r.target)} | ${cell(r.judge)} | ${cell(r.contrast)} | ${interval(d.estimate, d.ci)} | ${pv(d.p)} | ${r.pHolm === null ? 'n/a' : `${pv(r.pHolm)} (of ${r.familySize})`} | ${r.pHolmWithinTarget === null ? 'n/a' : pv(r.pHolmWithinTarget)} |`
        : `| ${cell(r.target)} | ${cell(r.judge)} | ${cell(r.contrast)} | n/a (${cell(d.error)}) | | | |`,
    );
  }
  out.push('');
  return out;
}
