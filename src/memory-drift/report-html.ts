import type { IntervalEstimate, MemoryMaybe, MemoryObservation, MemoryReport, TargetAnalysis, ValidityVerdict } from './analysis.js';
import type { AuditHeadlineTarget } from '../experiment/audit.js';
import { documentVerdict } from '../report/document/build.js';
import type { DocumentVerdict } from '../report/document/types.js';
import { dtw } from '../metrics/dtw.js';
import { forestSpec, type IntervalRow, labelledScatterSpec } from '../report/charts.js';
import { figure, html, type RawHtml, table } from '../report/html.js';
import { vegaLiteToSvg } from '../report/svg.js';
import { fixed as f3, percent as pct, pValue as pv, signed as f2 } from '../report/format.js';

/** The memory-drift (DriftLens) part of the HTML report. */

const isErr = (v: unknown): v is { error: string } => v !== null && typeof v === 'object' && 'error' in v;

function verdictCell(v: ValidityVerdict): RawHtml {
  const cls = v.verdict === 'pass' ? 'no' : v.verdict === 'fail' ? 'yes' : 'muted';
  return html`<span class="${cls}">${v.verdict}</span> — ${v.reason}`;
}

function elevationText(e: MemoryMaybe<IntervalEstimate> | null): string {
  if (e === null) return '—';
  if (isErr(e)) return `n/a (${e.error})`;
  return `${pct(e.estimate)} [${pct(e.ci[0])}, ${pct(e.ci[1])}], p ${pv(e.p)}`;
}

const TIER_NAMES: Record<string, string> = { none: 'no memory (floor)', noise: 'pragmatic noise', persona: 'persona cues', life_event: 'life events' };

/**
 * The first screen of a memory run: per target, whether any category drifts
 * (DTW d_rel over the noise floor, BH within tier), the DTW elevation of each
 * tier over the no-memory floor, and the instrument-validity checks — every
 * number read from `report.targets`, as in the JSON.
 */
export function memoryHeadline(report: MemoryReport): AuditHeadlineTarget[] {
  return report.targets.map((t) => {
    const dtwMetric = t.metrics.dtw;
    const tested = dtwMetric.dRel.filter((d) => !isErr(d.result));
    const significant = dtwMetric.dRel.filter((d) => !isErr(d.result) && d.result.significant).map((d) => d.condition);
    const validity = t.validity.overall;
    const verdict =
      validity === 'fail'
        ? 'instrument validity failed: drift not interpretable'
        : tested.length === 0
          ? 'not computable'
          : significant.length > 0
            ? `memory drift in ${significant.length} of ${tested.length} categories`
            : 'no category drifts beyond the noise floor';
    const tone: AuditHeadlineTarget['tone'] = validity === 'fail' || tested.length === 0 ? 'neutral' : significant.length > 0 ? 'alert' : 'ok';
    const numbers: AuditHeadlineTarget['numbers'] = [];
    for (const tier of dtwMetric.tiers) {
      numbers.push({
        label: `DTW elevation · ${TIER_NAMES[tier.tier] ?? tier.tier}`,
        value: elevationText(tier.elevation),
        detail: `${tier.conditions.length} condition(s), ${tier.nQuestions} questions`,
      });
    }
    numbers.push({
      label: 'significant categories (DTW d_rel, BH)',
      value: significant.length > 0 ? significant.join(', ') : 'none',
      detail: `of ${tested.length} persona and life-event categories tested`,
    });
    numbers.push({
      label: 'instrument validity',
      value: validity,
      detail: `specificity ${t.validity.specificity.verdict}, sensitivity ${t.validity.sensitivity.verdict}, convergent ${t.validity.convergent.verdict}`,
    });
    return { target: t.target, verdict, tone, numbers };
  });
}

/**
 * The memory verdicts as data: the headline's cards, with the DTW elevation's minimum detectable
 * effect and the design's underpowered flag (the verdict rests on several categories, so it has no
 * single estimate; the estimates are the document's rows).
 */
export function memoryVerdicts(report: MemoryReport): DocumentVerdict[] {
  const headline = memoryHeadline(report);
  return report.targets.map((t, i): DocumentVerdict => {
    const h = headline[i] as AuditHeadlineTarget;
    return documentVerdict({
      subject: h.target,
      verdict: h.verdict,
      tone: h.tone,
      numbers: h.numbers,
      mde: t.metrics.dtw.power.minimumDetectableElevation,
      underpowered: t.design.underpowered,
    });
  });
}

async function targetSection(t: TargetAnalysis): Promise<RawHtml[]> {
  const parts: RawHtml[] = [html`<h3>${t.target} <span class="muted">(${t.nQuestions} questions)</span></h3>`];
  parts.push(html`<h4>Instrument validity (§3): overall <strong>${t.validity.overall}</strong></h4>`);
  parts.push(
    table(
      [
        { name: 'specificity (noise ≈ floor)', v: t.validity.specificity },
        { name: 'sensitivity (life events elevated)', v: t.validity.sensitivity },
        { name: 'convergent validity (DTW ~ SRI)', v: t.validity.convergent },
      ],
      [
        { header: 'check', value: (r) => r.name },
        { header: 'verdict', value: (r) => verdictCell(r.v) },
      ],
    ),
  );

  // d_rel forest (persona and life-event categories) under both metrics.
  const rows: IntervalRow[] = [];
  for (const metric of ['dtw', 'sri'] as const) {
    for (const entry of t.metrics[metric].dRel) {
      if (!isErr(entry.result)) {
        // The claim's interval (BH-consistent); unbounded ends are drawn at the test-alone interval's.
        const [lo, hi] = entry.result.claim.interval;
        rows.push({
          label: entry.condition,
          group: metric.toUpperCase(),
          estimate: entry.result.dRel,
          lo: Number.isFinite(lo) ? lo : entry.result.ci[0],
          hi: Number.isFinite(hi) ? hi : entry.result.ci[1],
        });
      }
    }
  }
  if (rows.length > 0) {
    parts.push(
      figure(
        await vegaLiteToSvg(forestSpec(rows, { xTitle: 'd_rel = (μ_treat − μ_noise) / σ_noise', rules: [0] })),
        'Standardised drift over the pragmatic-noise floor per category, 95% question-cluster bootstrap CI (μ_noise and σ_noise re-estimated per replicate).',
      ),
    );
  }

  for (const metric of ['dtw', 'sri'] as const) {
    const m = t.metrics[metric];
    const letters = isErr(m.pairwise) ? new Map<string, string>() : new Map(m.pairwise.order.map((o) => [o.condition, o.letters]));
    const dRel = new Map(m.dRel.map((d) => [d.condition, d.result]));
    parts.push(html`<h4>${metric.toUpperCase()} by condition</h4>`);
    parts.push(
      table(m.conditions, [
        { header: 'condition', value: (c) => c.condition },
        { header: 'tier', value: (c) => c.tier },
        { header: 'n (questions)', value: (c) => `${c.n} (${c.nQuestions})`, numeric: true },
        { header: 'mean', value: (c) => f3(c.mean), numeric: true },
        { header: 'elevation over floor [95% CI]', value: (c) => elevationText(c.elevation), numeric: true },
        { header: "Cohen's d", value: (c) => (c.cohensD === null ? '—' : isErr(c.cohensD) ? 'n/a' : f2(c.cohensD)), numeric: true },
        {
          header: 'd_rel [BH-consistent CI], BH p',
          value: (c) => {
            const d = dRel.get(c.condition);
            if (!d) return '—';
            if (isErr(d)) return `n/a (${d.error})`;
            return `${f2(d.dRel)} [${f2(d.claim.interval[0], 2, '−∞')}, ${f2(d.claim.interval[1], 2, '+∞')}], ${pv(d.claim.p)}${d.significant ? ' *' : ''}`;
          },
          numeric: true,
        },
        { header: 'letters', value: (c) => letters.get(c.condition) ?? '' },
      ]),
    );
    if (!isErr(m.mixedModel)) {
      const mm = m.mixedModel;
      parts.push(
        html`<details><summary>Mixed model (${mm.method}; reference ${mm.reference}; ${mm.nObs} observations in ${mm.nGroups} questions; σ²_question ${f3(mm.groupVariance)}, σ²_residual ${f3(mm.residualVariance)})</summary>`,
      );
      parts.push(
        table(mm.fixed, [
          { header: 'term', value: (e) => e.term },
          { header: 'estimate', value: (e) => f3(e.estimate), numeric: true },
          { header: 'SE', value: (e) => f3(e.se), numeric: true },
          { header: 'z', value: (e) => f3(e.z), numeric: true },
          { header: 'p', value: (e) => pv(e.p), numeric: true },
        ]),
      );
      parts.push(html`</details>`);
    } else {
      parts.push(html`<p class="muted">Mixed model: n/a (${m.mixedModel.error})</p>`);
    }
  }

  // Tier plot: percent elevation per condition under both metrics.
  const tierRows: IntervalRow[] = [];
  for (const metric of ['dtw', 'sri'] as const) {
    for (const c of t.metrics[metric].conditions) {
      if (c.elevation && !isErr(c.elevation)) {
        tierRows.push({
          label: `${c.tier} · ${c.condition}`,
          group: metric.toUpperCase(),
          estimate: c.elevation.estimate,
          lo: c.elevation.ci[0],
          hi: c.elevation.ci[1],
        });
      }
    }
  }
  if (tierRows.length > 0) {
    parts.push(
      figure(
        await vegaLiteToSvg(forestSpec(tierRows, { xTitle: 'elevation over the no-perturbation floor (μ / μ_floor − 1)', rules: [0] })),
        'Three tiers should separate: pragmatic noise near 0, persona cues intermediate, major life events largest (paper Fig. 5).',
      ),
    );
  }

  if (!isErr(t.convergence)) {
    const c = t.convergence;
    const tierOf = new Map(t.metrics.dtw.conditions.map((x) => [x.condition, x.tier as string]));
    parts.push(
      figure(
        await vegaLiteToSvg(
          labelledScatterSpec(
            c.conditions.map((name, i) => {
              const tier = name.startsWith('tier:') ? name.slice(5) : (tierOf.get(name) ?? 'other');
              return {
                x: c.dtwMeans[i] as number,
                y: c.sriMeans[i] as number,
                label: name.startsWith('tier:') ? `${TIER_NAMES[tier] ?? tier} (pooled)` : name,
                group: TIER_NAMES[tier] ?? tier,
                tip: `${name}: mean DTW ${f3(c.dtwMeans[i])}, mean SRI ${f3(c.sriMeans[i])}`,
              };
            }),
            { xTitle: 'mean DTW drift (per condition)', yTitle: 'mean SRI drift (per condition)', groupTitle: 'tier' },
          ),
        ),
        `Convergent validity over ${c.conditions.length} conditions: Spearman ρ ${isErr(c.spearman) ? 'n/a' : `${c.spearman.rho.toFixed(3)} (p ${pv(c.spearman.p)})`}, Pearson r ${isErr(c.pearson) ? 'n/a' : `${c.pearson.r.toFixed(3)} (p ${pv(c.pearson.p)})`}.`,
      ),
    );
  }
  return parts;
}

/** Trajectories whose symbols diverge most from the no-memory reference, aligned by the DTW path. */
function exampleTrajectories(observations: readonly MemoryObservation[], limit: number): RawHtml[] {
  const scored = observations
    .filter((o) => o.status === 'scored' && o.baselineSymbols && o.symbols && typeof o.dtw === 'number' && o.tier !== 'noise')
    .sort((a, b) => (b.dtw as number) - (a.dtw as number) || a.question.localeCompare(b.question))
    .slice(0, limit);
  if (scored.length === 0) return [html`<p class="muted">No scored trajectories.</p>`];
  return scored.map((o) => {
    const base = o.baselineSymbols as readonly string[];
    const inter = o.symbols as readonly string[];
    const { path } = dtw(base, inter);
    const rows = path.map(([i, j]) => ({ i, j, a: base[i] ?? '', b: inter[j] ?? '' }));
    return html`<div><span class="tag">${o.target}</span><span class="tag">${o.question}</span><span class="tag">${o.condition}</span> DTW ${f3(o.dtw)}, SRI ${f3(o.sri)}
${table(rows, [
  { header: 'no memory', value: (r) => `${r.i + 1}. ${r.a}` },
  { header: `with ${o.condition}`, value: (r) => html`<span class="${r.a === r.b ? '' : 'yes'}">${r.j + 1}. ${r.b}</span>` },
])}</div>`;
  });
}

/** What the run summary adds to the HTML section: why labelings failed, and the refusal judge's agreement. */
export interface MemoryRunNotes {
  labelerFailures?: Record<string, number>;
  refusalJudge?: {
    model: string;
    answers: number;
    refusals: number;
    agreement: { judged: number; both: number; judgeOnly: number; detectorOnly: number; neither: number };
  };
}

export async function memorySection(report: MemoryReport, observations: readonly MemoryObservation[] = [], notes: MemoryRunNotes = {}): Promise<RawHtml> {
  const parts: RawHtml[] = [
    html`<p class="note">Drift = distance between the value-symbol trajectory of a response with injected user memory and the same model's no-memory reference trajectory for the same question (DTW normalised by max(n, m); SRI = ½ edit distance + ½ Jensen–Shannon). Lower = more stable. Bootstrap B = ${report.options.B}, seed ${report.options.seed}.</p>`,
  ];
  // The seed-independence warning the Markdown report gives (report-markdown.ts), first: it qualifies every number below.
  if (report.sampling !== undefined && !report.sampling.independent) {
    parts.push(html`<p class="note"><strong>Sampling: seeds ${report.sampling.seeding} — not independent</strong>: ${report.sampling.note}.</p>`);
  }
  for (const t of report.targets) parts.push(...(await targetSection(t)));
  parts.push(html`<h3 id="memory-counts">Cells, dropouts, invalid labels and unmapped steps</h3>`);
  parts.push(html`<details><summary>${report.counts.scored} of ${report.counts.observations} observations scored — per condition</summary>`);
  parts.push(
    table(report.counts.byCondition, [
      { header: 'target', value: (c) => c.target },
      { header: 'condition', value: (c) => c.condition },
      { header: 'scored / total', value: (c) => `${c.scored} / ${c.total}`, numeric: true },
      { header: 'dropout rate', value: (c) => `${(100 * c.dropoutRate).toFixed(1)}%`, numeric: true },
      { header: 'invalid labels', value: (c) => (c.invalidRate === null ? '—' : `${(100 * c.invalidRate).toFixed(1)}%`), numeric: true },
      { header: 'unmapped steps', value: (c) => (c.unmappedRate === null ? '—' : `${(100 * c.unmappedRate).toFixed(1)}%`), numeric: true },
    ]),
  );
  const failures = Object.entries(notes.labelerFailures ?? {}).sort((a, b) => b[1] - a[1]);
  if (failures.length > 0) {
    parts.push(
      html`<p class="note">Invalid labelings by the parse failure of their last attempt: ${failures.map(([reason, n]) => `${reason} ${n}`).join(', ')}.</p>`,
    );
  }
  const judge = notes.refusalJudge;
  if (judge !== undefined) {
    const a = judge.agreement;
    parts.push(
      html`<p class="note">Refusal judge ${judge.model} (its verdict decides; the detector where it has none): ${judge.refusals} refusals in ${judge.answers} answers; with the detector on ${a.judged} judged answers: both ${a.both}, judge only ${a.judgeOnly}, detector only ${a.detectorOnly}, neither ${a.neither}.</p>`,
    );
  }
  parts.push(html`</details>`);
  parts.push(
    html`<h3>Trajectories that moved most</h3><p class="note">Steps aligned by the DTW path; highlighted symbols differ from the no-memory reference.</p>`,
  );
  parts.push(html`<div class="examples">${exampleTrajectories(observations, 3)}</div>`);
  return html`${parts}`;
}
