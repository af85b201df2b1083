import type { UnitInference } from './inference.js';
import type { Estimate, GapEstimate, Maybe, PersonaReport } from './analysis.js';
import { markdownText } from '../report/markdown-text.js';
import { contentPositionMarkdown, referenceMarkdown } from './reference-render.js';
import { extrasMarkdown } from './extras-render.js';
import { describePersonaUnits } from './units.js';
import { fixed as f3, pValue as pv, share as pct, signed as f2 } from '../report/format.js';
import { claimInterval, claimP, confidenceNote } from './claim-text.js';

/** Markdown rendering of a PersonaReport: the same numbers as the JSON, for people. */

/** Markdown table cells: no pipes or newlines from data. */
const cell = markdownText;

/** An estimate with its interval: the claim's (the interval that agrees with the deciding p) where it has one. */
function gapText(gap: Maybe<Estimate | UnitInference>): string {
  if ('error' in gap) return `n/a (${cell(gap.error)})`;
  if ('claim' in gap) {
    const ci = claimInterval(gap);
    return `${f2(gap.estimate)} [${f2(ci[0])}, ${f2(ci[1])}]${confidenceNote(gap.claim)}`;
  }
  return `${f2(gap.estimate)} [${f2(gap.ci[0])}, ${f2(gap.ci[1])}]`;
}

/** A difference of rates in percentage points with its interval; `withLevel` names the unit of inference. */
function ppText(difference: Maybe<GapEstimate>, withLevel = false): string {
  if ('error' in difference) return `n/a (${cell(difference.error)})`;
  const ci = claimInterval(difference);
  const text = `${f2(100 * difference.estimate)} pp [${f2(100 * ci[0])}, ${f2(100 * ci[1])}]${confidenceNote(difference.claim)}`;
  return withLevel ? `${text} (${difference.level}s)` : text;
}

/** The deciding p of a claim (Holm-adjusted in a family), n/a where the test was refused. */
const claimPText = (test: Maybe<UnitInference>) => ('error' in test ? 'n/a' : pv(claimP(test)));
/** How many units of which kind carried the inference. */
const unitsText = (result: Maybe<{ units: number; level: string }>) => ('error' in result ? 'n/a' : `${result.units} ${result.level}s`);

function table(header: string[], rows: string[][]): string {
  if (rows.length === 0) return '_No data._\n';
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n') + '\n';
}

/** The verdict per target and what Δ means here. */
function verdictSection(report: PersonaReport): string[] {
  const out: string[] = [];
  out.push('## Verdict per target', '');
  for (const v of report.verdicts) out.push(`- **${cell(v.target)}** (judge ${cell(v.judge)}) — ${cell(v.text)}. Cell: ${cell(v.cell)}.`);
  if (report.verdicts.length === 0) out.push('_No judged probe cells: no drift verdict._');
  out.push('');
  out.push(
    `Drift gap Δ = mean judge score on the filler arm − on the real-session arm (0–3 scale; positive = drift) in the headline cell (${cell(report.design.headline)}). Inference is at the sampled unit: positions when the run has one session, sessions when it has several (positions averaged within their session); a sign-flip test of the unit means (exact up to 20 units) and its inverted 95% interval, which excludes 0 exactly when p < 0.05 (t interval widened to 0 when the test cannot reach 0.05), Holm across targets; a significant session-level verdict that one session carries is marked fragile. Strong drift: |Δ| ≥ ${report.options.strongThreshold}. Check what this design can detect before a run with \`echolens persona calibrate <config>\`.`,
    '',
  );
  return out;
}

/** The units of inference and the drift table per target. */
function driftSection(report: PersonaReport): string[] {
  const out: string[] = [];
  const unitLines = describePersonaUnits(report.units);
  if (unitLines.length > 0) out.push('Units of inference:', '', ...unitLines.map((line) => `- ${cell(line)}`), '');
  out.push('## Drift per target', '');
  out.push(
    table(
      ['target', 'judge', 'Δ [95% CI]', 'real', 'filler', 'units', 'strong', 'p (Holm across targets)', 'onset'],
      report.drift.map((d) => [
        cell(d.target),
        cell(d.judge),
        gapText(d.gap),
        'error' in d.gap ? 'n/a' : f3(d.gap.real.estimate),
        'error' in d.gap ? 'n/a' : f3(d.gap.filler.estimate),
        'error' in d.gap ? 'n/a' : d.gap.level === 'session' ? `${d.gap.units} sessions (${d.gap.positions} positions)` : `${d.gap.units} positions`,
        d.strongDrift ? 'yes' : 'no',
        claimPText(d.gap),
        d.onset ? `${cell(d.onset.position)} (${d.onset.positionValue})` : '—',
      ]),
    ),
  );
  return out;
}

/** Per target and judge: Δ by session, over positions, by probe category and against reference contexts. */
function driftDetailSection(report: PersonaReport): string[] {
  const out: string[] = [];
  for (const d of report.drift) {
    out.push(`### ${cell(d.target)} — judge ${cell(d.judge)}`, '');
    out.push(`Cell: ${cell(d.cell)}.`, '');
    if (!('error' in d.gap) && d.gap.note) out.push(`Note: ${cell(d.gap.note)}.`, '');
    out.push('By session (its positions are the units):', '');
    out.push(
      table(
        ['session', 'Δ [95% CI]'],
        d.bySession.map((x) => [cell(x.session), gapText(x.gap)]),
      ),
    );
    out.push('Trajectory over positions (probes are the units):', '');
    out.push(
      table(
        ['session', 'position', 'counter', 'Δ [95% CI]'],
        d.byPosition.map((p) => [cell(p.session), cell(p.position), String(p.positionValue), gapText(p.gap)]),
      ),
    );
    out.push('By probe category:', '');
    out.push(
      table(
        ['category', 'Δ [95% CI]'],
        d.byCategory.map((c) => [cell(c.category), gapText(c.gap)]),
      ),
    );
    if (d.referenceArms.length > 0) {
      out.push('Reference contexts (Δ = filler − arm):', '');
      out.push(
        table(
          ['arm', 'Δ [95% CI]'],
          d.referenceArms.map((r) => [cell(r.arm), gapText(r.gap)]),
        ),
      );
    }
  }
  return out;
}

/** The continuations replayed after each position. */
function continuationsSection(report: PersonaReport): string[] {
  const out: string[] = [];
  if (report.design.continuations.length > 0) {
    out.push('## Continuations replayed after each position', '');
    out.push(
      table(
        ['session', 'position', 'continuation'],
        report.design.continuations.map((c) => [cell(c.session), cell(c.position), cell(c.text)]),
      ),
    );
  }
  return out;
}

/** The design's other cells (contrasts). */
function contrastsSection(report: PersonaReport): string[] {
  const out: string[] = [];
  if (report.contrasts.length > 0) {
    out.push('## Other cells of the design', '');
    out.push(
      table(
        ['kind', 'contrast', 'estimate [95% CI]', 'units', 'sign-flip p'],
        report.contrasts.map((c) => [c.kind, cell(c.name), gapText(c.result), unitsText(c.result), claimPText(c.result)]),
      ),
    );
  }
  return out;
}

/** The scratch arm (no context). */
function scratchSection(report: PersonaReport): string[] {
  const out: string[] = [];
  if (report.scratch.length > 0) {
    out.push('## Scratch arm (no context; analysed once per target)', '');
    out.push(
      table(
        ['target', 'judge', 'prompt', 'distinct answers', 'mean [95% CI over probes]'],
        report.scratch.map((x) => [
          cell(x.target),
          cell(x.judge),
          cell(x.systemPrompt),
          String(x.answers),
          'error' in x.mean ? `n/a (${cell(x.mean.error)})` : `${f3(x.mean.estimate)} [${f3(x.mean.ci[0])}, ${f3(x.mean.ci[1])}]`,
        ]),
      ),
    );
  }
  return out;
}

/** Mitigation arms against control and placebo. */
function mitigationsSection(report: PersonaReport): string[] {
  const out: string[] = [];
  if (report.mitigations.length > 0) {
    out.push('## Mitigations (probe surface, real context)', '');
    out.push(
      table(
        ['target', 'judge', 'arm', 'prompt', 'distance', 'mean', 'n', 'arm − control [95% CI]', 'Holm p', 'arm − placebo [95% CI]', 'recovery'],
        report.mitigations.map((m) => [
          cell(m.target),
          cell(m.judge),
          cell(m.mitigation),
          cell(m.systemPrompt),
          cell(m.distance),
          f3(m.mean),
          String(m.n),
          gapText(m.vsControl),
          claimPText(m.vsControl),
          m.vsPlacebo ? gapText(m.vsPlacebo) : '—',
          m.recovery === null ? '—' : pct(m.recovery),
        ]),
      ),
    );
  }
  return out;
}

/** Judge-free stressors: compliance, verbosity and their filler − real contrasts. */
function stressorsSection(report: PersonaReport): string[] {
  const out: string[] = [];
  if (report.stressors.length > 0) {
    out.push('## Stressors (judge-free)', '');
    out.push(
      table(
        ['target', 'stressor', 'arm', 'mitigation', 'n', 'compliance', 'mean length'],
        report.stressors.map((s) => [cell(s.target), s.item, cell(s.arm), cell(s.mitigation), String(s.n), pct(s.complianceRate), s.meanLength.toFixed(0)]),
      ),
    );
    out.push(
      table(
        ['target', 'stressor', 'pairs', 'compliance gap (pp)', 'median verbosity ratio', 'ratio when both comply', 'between-session share'],
        report.verbosity.map((v) => [
          cell(v.target),
          v.item,
          String(v.pairs),
          f2(v.complianceGapPp),
          v.medianRatio === null ? 'n/a' : `${v.medianRatio.toFixed(2)}×`,
          v.conditionalRatio === null ? 'n/a' : `${v.conditionalRatio.toFixed(2)}× (n=${v.conditionalPairs})`,
          v.heterogeneity === null ? '—' : 'error' in v.heterogeneity ? `n/a (${cell(v.heterogeneity.error)})` : pct(v.heterogeneity.betweenShare),
        ]),
      ),
    );
    out.push(
      table(
        ['target', 'stressor', 'prompt', 'filler − real compliance [95% CI]', 'units', 'Holm p'],
        report.stressorContrasts.map((c) => [
          cell(c.target),
          c.item,
          cell(c.systemPrompt),
          ppText(c.difference),
          unitsText(c.difference),
          claimPText(c.difference),
        ]),
      ),
    );
  }
  return out;
}

/** Hardened contracts: pass rates and contrasts. */
function contractsSection(report: PersonaReport): string[] {
  const out: string[] = [];
  if (report.contracts.length > 0) {
    out.push('## Hardened contracts (deterministic parsers)', '');
    out.push(
      table(
        ['target', 'contract', 'arm', 'mitigation', 'distance', 'n', 'pass', 'failures'],
        report.contracts.map((c) => [
          cell(c.target),
          c.item,
          cell(c.arm),
          cell(c.mitigation),
          cell(c.distance),
          String(c.n),
          pct(c.passRate),
          Object.entries(c.failures)
            .map(([k, v]) => `${k}: ${v}`)
            .join(', ') || '—',
        ]),
      ),
    );
    out.push(
      table(
        ['target', 'contract', 'contrast', 'prompt', 'distance', 'sessions', 'difference [95% CI]', 'Holm p'],
        report.contractContrasts.map((c) => [
          cell(c.target),
          cell(c.item),
          cell(c.contrast),
          cell(c.systemPrompt),
          cell(c.distance),
          String(c.sessions),
          ppText(c.difference, true),
          claimPText(c.difference),
        ]),
      ),
    );
  }
  return out;
}

/** Compaction: post − pre change in Δ with its equivalence test. */
function compactionSection(report: PersonaReport): string[] {
  const out: string[] = [];
  if (report.compaction.length > 0) {
    out.push('## Compaction (post − pre change in Δ)', '');
    out.push(
      table(
        ['target', 'judge', 'events', 'mean change', `TOST (±${report.options.tostMargin})`],
        report.compaction.map((c) => [
          cell(c.target),
          cell(c.judge),
          String(c.events.length),
          c.meanChange === null ? 'n/a' : f2(c.meanChange),
          c.tost === null
            ? '—'
            : 'error' in c.tost
              ? `n/a (${cell(c.tost.error)})`
              : `p = ${pv(c.tost.p)}, 90% CI [${f2(c.tost.ci[0])}, ${f2(c.tost.ci[1])}], ${c.tost.equivalent ? 'equivalent' : 'not shown equivalent'}`,
        ]),
      ),
    );
  }
  return out;
}

/** Agreement between judges. */
function agreementSection(report: PersonaReport): string[] {
  const out: string[] = [];
  if (report.judgeAgreement.length > 0) {
    out.push('## Cross-judge agreement', '');
    out.push(
      table(
        ['judges', 'pairs', 'exact', 'within one', 'κ', 'κ (quadratic)', 'sign agree / flip / null-vs-small'],
        report.judgeAgreement.map((a) => [
          `${cell(a.judgeA)} vs ${cell(a.judgeB)}`,
          'error' in a.pairs ? 'n/a' : String(a.pairs.n),
          'error' in a.pairs ? 'n/a' : pct(a.pairs.exact),
          'error' in a.pairs ? 'n/a' : pct(a.pairs.withinOne),
          'error' in a.pairs ? 'n/a' : f3(a.pairs.kappa),
          'error' in a.pairs ? 'n/a' : f3(a.pairs.kappaQuadratic),
          'error' in a.signs ? 'n/a' : `${a.signs.agree} / ${a.signs.flip} / ${a.signs.nullVsSmall}`,
        ]),
      ),
    );
  }
  return out;
}

/** The judge-free behavioural fingerprint. */
function fingerprintSection(report: PersonaReport): string[] {
  const out: string[] = [];
  if (report.fingerprint && !('error' in report.fingerprint)) {
    out.push('## Behavioural fingerprint (judge-free, PCA)', '');
    out.push(
      `PC1 explains ${pct(report.fingerprint.explainedVarianceRatio[0])}, PC2 ${pct(report.fingerprint.explainedVarianceRatio[1])} of the standardized feature variance; PC1 is oriented so the real arm is positive.`,
      '',
    );
    out.push(
      table(
        ['arm', 'mitigation', 'n', 'PC1', 'PC2'],
        report.fingerprint.centroids.map((c) => [cell(c.arm), cell(c.mitigation), String(c.n), f2(c.pc1), f2(c.pc2)]),
      ),
    );
  }
  return out;
}

/** Cell counts, dropouts and invalid judgements. */
function countsSection(report: PersonaReport): string[] {
  const out: string[] = [];
  out.push('## Cells, dropouts and invalid judgements', '');
  out.push(
    table(
      ['target', 'arm', 'mitigation', 'surface', 'done', 'empty (dropout)', 'failed', 'dropout rate'],
      report.counts.byArm.map((a) => [
        cell(a.target),
        cell(a.arm),
        cell(a.mitigation),
        a.surface,
        String(a.done),
        String(a.empty),
        String(a.failed),
        pct(a.dropoutRate),
      ]),
    ),
  );
  out.push(
    table(
      ['judge', 'arm', 'mitigation', 'judged', 'invalid (excluded)'],
      report.counts.invalidJudgements.map((j) => [cell(j.judge), cell(j.arm), cell(j.mitigation), String(j.judged), String(j.invalid)]),
    ),
  );
  return out;
}

export function renderPersonaMarkdown(report: PersonaReport, title = 'Persona drift (ContextEcho) report'): string {
  const out: string[] = [`# ${title}`, ''];
  out.push(...verdictSection(report));
  out.push(...driftSection(report));
  out.push(...contentPositionMarkdown(report));
  out.push(...referenceMarkdown(report));
  out.push(...extrasMarkdown(report));
  out.push(...driftDetailSection(report));
  out.push(...continuationsSection(report));
  out.push(...contrastsSection(report));
  out.push(...scratchSection(report));
  out.push(...mitigationsSection(report));
  out.push(...stressorsSection(report));
  out.push(...contractsSection(report));
  out.push(...compactionSection(report));
  out.push(...agreementSection(report));
  out.push(...fingerprintSection(report));
  out.push(...countsSection(report));
  return out.join('\n');
}
