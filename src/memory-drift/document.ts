import { isRefusal, type Maybe } from '../core/maybe.js';
import type { AuditHeadlineTarget } from '../experiment/audit.js';
import { dtw } from '../metrics/dtw.js';
import { forestSpec, type IntervalRow, labelledScatterSpec } from '../report/charts.js';
import { verdictOfHeadline } from '../report/document/build.js';
import { int, intervalCell, num, para, pCell, table, text } from '../report/document/cells.js';
import { documentMarkdown } from '../report/document/render-markdown.js';
import type { AuditDocumentPart, DocumentBlock, DocumentCell, DocumentSection, DocumentVerdict } from '../report/document/types.js';
import { type RateWithError, withinNominal } from '../stats/calibration.js';
import { fixed, pClause, percent as pct, pValue as pv, signed } from '../report/format.js';
import type {
  ElevationEstimate,
  MemoryMetric,
  MemoryObservation,
  MemoryReport,
  MetricAnalysis,
  TargetAnalysis,
  ValidityCheck,
  ValidityVerdict,
} from './analysis.js';
import type { MemoryCalibration } from './calibrate.js';
import { collectionObservations, type LabelerCheckCollection, type MemoryCollection, type MemoryCollectionSummary } from './observations.js';
import type { LabelAgreement, LabelerReliability } from './reliability.js';

/**
 * The memory-drift (DriftLens) result document (pure): verdicts, and the report's sections as data
 * — tables of typed cells, the d_rel, tier and convergence charts, notes and the trajectories that
 * moved most. The shared renderers (report/document/) draw it as HTML and Markdown.
 */

const METRIC_NAMES: Record<MemoryMetric, string> = { dtw: 'DTW', sri: 'SRI' };
const TIER_NAMES: Record<string, string> = { none: 'no memory (floor)', noise: 'pragmatic noise', persona: 'persona cues', life_event: 'life events' };
const failure = (value: { error: string }) => `n/a (${value.error})`;
const failed = (value: { error: string }) => text(failure(value));

/** A tier's elevation as its claim: the interval that agrees with its p. */
function elevationText(e: Maybe<ElevationEstimate> | null): string {
  if (e === null) return '—';
  if (isRefusal(e)) return failure(e);
  return `${pct(e.estimate)} [${pct(e.claim.interval[0])}, ${pct(e.claim.interval[1])}], p ${pv(e.claim.p)}`;
}

/**
 * The first screen of a memory run: per target, whether any category drifts (DTW d_rel over the
 * noise floor, BH within tier), the DTW elevation of each tier over the no-memory floor, and the
 * instrument-validity checks — every number read from `report.targets`, as in the JSON.
 */
export function memoryHeadline(report: MemoryReport): AuditHeadlineTarget[] {
  return report.targets.map((t) => {
    const dtwMetric = t.metrics.dtw;
    const tested = dtwMetric.dRel.filter((d) => !isRefusal(d.result));
    const significant = dtwMetric.dRel.filter((d) => !isRefusal(d.result) && d.result.significant).map((d) => d.condition);
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
    return {
      target: t.target,
      verdict,
      tone,
      numbers: [
        ...dtwMetric.tiers.map((tier) => ({
          label: `DTW elevation · ${TIER_NAMES[tier.tier] ?? tier.tier}`,
          value: elevationText(tier.elevation),
          detail: `${tier.conditions.length} condition(s), ${tier.nQuestions} questions`,
        })),
        {
          label: 'significant categories (DTW d_rel, BH)',
          value: significant.length > 0 ? significant.join(', ') : 'none',
          detail: `of ${tested.length} persona and life-event categories tested`,
        },
        {
          label: 'instrument validity',
          value: validity,
          detail: `specificity ${t.validity.specificity.verdict}, sensitivity ${t.validity.sensitivity.verdict}, convergent ${t.validity.convergent.verdict}`,
        },
      ],
    };
  });
}

/**
 * The memory verdicts as data: the headline's cards, with the DTW elevation's minimum detectable
 * effect and the design's underpowered flag (the verdict rests on several categories, so it has no
 * single estimate; the estimates are the document's rows).
 */
export function memoryVerdicts(report: MemoryReport): DocumentVerdict[] {
  return memoryHeadline(report).map((h, i): DocumentVerdict => {
    const t = report.targets[i] as TargetAnalysis;
    return { ...verdictOfHeadline(h), mde: t.metrics.dtw.power.minimumDetectableElevation, underpowered: t.design.underpowered };
  });
}

const columns = (...headers: string[]) => headers.map((header) => ({ header }));
const maybeSigned = (value: Maybe<number> | null, digits = 3): DocumentCell =>
  value === null ? text('—') : isRefusal(value) ? failed(value) : num(value, 'signed', digits);
// The claim: the BH-adjusted p (a condition row; a tier row is a family of one) and the bootstrap
// test inverted at the BH level, so the interval excludes 0 exactly when the p is below α.
const elevationCells = (value: Maybe<ElevationEstimate> | null): DocumentCell[] => {
  if (value === null) return [text('— (floor)'), text('—')];
  if (isRefusal(value)) return [failed(value), text('n/a')];
  const level = Number((100 * value.claim.confidence).toFixed(2));
  return [intervalCell(value.estimate, value.claim.interval, 'percent', undefined, level === 95 ? '' : ` (${level}%)`), pCell(value.claim.p)];
};

function checkRow(criterion: string, check: ValidityCheck): DocumentCell[] {
  return [
    text(criterion),
    text(check.metric === 'dtw~sri' ? 'DTW ~ SRI' : METRIC_NAMES[check.metric]),
    text(check.subject),
    check.estimate === null ? text('n/a') : num(check.estimate, check.metric === 'dtw~sri' ? 'fixed' : 'percent'),
    pCell(check.p),
    text(check.met === null ? `undetermined (${check.error ?? 'not computed'})` : check.met ? 'yes' : 'no'),
  ];
}

function validityBlocks(target: TargetAnalysis): DocumentBlock[] {
  const verdicts: Array<[string, ValidityVerdict]> = [
    ['Specificity', target.validity.specificity],
    ['Sensitivity', target.validity.sensitivity],
    ['Convergent validity', target.validity.convergent],
  ];
  return [
    { kind: 'heading', text: `Instrument validity (§3): ${target.validity.overall.toUpperCase()}` },
    table(
      ['check', 'verdict', 'reason'],
      verdicts.map(([name, v]) => [text(name), text(v.verdict.toUpperCase(), { mark: v.verdict === 'fail' }), text(v.reason)]),
    ),
    { kind: 'text', text: 'Checks (elevation over the floor for specificity and sensitivity; Spearman ρ for convergent validity):' },
    table(
      ['check', 'metric', 'subject', 'estimate', 'p', 'met'],
      verdicts.flatMap(([name, v]) => v.checks.map((check) => checkRow(name, check))),
    ),
  ];
}

function convergenceBlocks(target: TargetAnalysis): DocumentBlock[] {
  const out: DocumentBlock[] = [{ kind: 'heading', text: 'Convergent validity (Table 1)' }];
  const c = target.convergence;
  if (isRefusal(c)) return [...out, { kind: 'text', text: failure(c) }];
  const spearman = isRefusal(c.spearman) ? failure(c.spearman) : `ρ = ${fixed(c.spearman.rho)} (${pClause(c.spearman.p)})`;
  const pearson = isRefusal(c.pearson) ? failure(c.pearson) : `r = ${fixed(c.pearson.r)} (${pClause(c.pearson.p)})`;
  const tierOf = new Map(target.metrics.dtw.conditions.map((x) => [x.condition, x.tier as string]));
  out.push(
    { kind: 'text', text: `Over ${c.conditions.length} conditions: Spearman ${spearman}; Pearson ${pearson}.` },
    para(
      `Tiers by ascending mean: DTW ${c.tierOrder.dtw.join(' < ')}; SRI ${c.tierOrder.sri.join(' < ')} (${c.tierOrder.identical ? 'same order' : 'different order'}).`,
    ),
    {
      kind: 'chart',
      spec: labelledScatterSpec(
        c.conditions.map((name, i) => {
          const tier = name.startsWith('tier:') ? name.slice(5) : (tierOf.get(name) ?? 'other');
          return {
            x: c.dtwMeans[i] as number,
            y: c.sriMeans[i] as number,
            label: name.startsWith('tier:') ? `${TIER_NAMES[tier] ?? tier} (pooled)` : name,
            group: TIER_NAMES[tier] ?? tier,
            tip: `${name}: mean DTW ${fixed(c.dtwMeans[i])}, mean SRI ${fixed(c.sriMeans[i])}`,
          };
        }),
        { xTitle: 'mean DTW drift (per condition)', yTitle: 'mean SRI drift (per condition)', groupTitle: 'tier' },
      ),
      caption: `Convergent validity over ${c.conditions.length} conditions: Spearman ρ ${isRefusal(c.spearman) ? 'n/a' : `${c.spearman.rho.toFixed(3)} (p ${pv(c.spearman.p)})`}, Pearson r ${isRefusal(c.pearson) ? 'n/a' : `${c.pearson.r.toFixed(3)} (p ${pv(c.pearson.p)})`}.`,
    },
    table(
      ['condition', 'DTW mean', 'SRI mean'],
      c.conditions.map((id, i) => [text(id), num(c.dtwMeans[i] as number, 'fixed', 4), num(c.sriMeans[i] as number, 'fixed', 4)]),
    ),
  );
  return out;
}

function metricBlocks(analysis: MetricAnalysis, alpha: number): DocumentBlock[] {
  const name = METRIC_NAMES[analysis.metric];
  const { floor, noise } = analysis;
  const sd = (x: number | null) => (x === null ? 'n/a' : fixed(x, 4));
  const out: DocumentBlock[] = [
    { kind: 'heading', text: name },
    para(
      `Floor: ${isRefusal(floor) ? failure(floor) : `${floor.condition} mean ${fixed(floor.mean, 4)}, SD ${sd(floor.sd)}, n = ${floor.n}, ${floor.nQuestions} questions`}. Pragmatic noise (μ_noise, σ_noise): ${
        isRefusal(noise) ? failure(noise) : `${noise.conditions.join(', ')}: mean ${fixed(noise.mean, 4)}, SD ${sd(noise.sd)}, n = ${noise.n}`
      }.`,
    ),
  ];
  const letters = new Map<string, string>();
  if (!isRefusal(analysis.pairwise)) for (const o of analysis.pairwise.order) if (o.letters !== null) letters.set(o.condition, o.letters);
  out.push(
    { kind: 'heading', minor: true, text: `${name}: conditions (Fig. 3, Fig. 5)` },
    table(
      ['condition', 'tier', 'n', 'questions', 'mean', 'SD', "Cohen's d vs floor", 'elevation [BH-consistent CI]', 'p (BH)', 'letters'],
      analysis.conditions.map((c) => [
        text(c.condition),
        text(c.tier),
        int(c.n),
        int(c.nQuestions),
        num(c.mean, 'fixed', 4),
        c.sd === null ? text('n/a') : num(c.sd, 'fixed', 4),
        maybeSigned(c.cohensD),
        ...elevationCells(c.elevation),
        text(letters.get(c.condition) ?? '—'),
      ]),
    ),
    { kind: 'heading', minor: true, text: `${name}: tiers (pooled)` },
    table(
      ['tier', 'conditions', 'n', 'questions', 'mean', "Cohen's d vs floor", 'elevation [95% CI]', 'p'],
      analysis.tiers.map((t) => [
        text(t.tier),
        int(t.conditions.length),
        int(t.n),
        int(t.nQuestions),
        num(t.mean, 'fixed', 4),
        maybeSigned(t.cohensD),
        ...elevationCells(t.elevation),
      ]),
    ),
    { kind: 'heading', minor: true, text: `${name}: d_rel per category (Fig. 4)` },
    table(
      [
        'condition',
        'tier',
        'd_rel [BH-consistent CI]',
        'p (BH)',
        `significant (α = ${alpha})`,
        'μ_treat',
        'μ_noise',
        'σ_noise',
        'questions',
        'invalid replicates',
      ],
      analysis.dRel.map((entry) => {
        const r = entry.result;
        if (isRefusal(r)) return [text(entry.condition), text(entry.tier), failed(r), ...Array.from({ length: 7 }, () => text('n/a'))];
        return [
          text(entry.condition),
          text(entry.tier),
          // The claim's interval (the bootstrap test inverted at the BH level), which excludes 0 exactly when the BH p < α.
          intervalCell(r.dRel, r.claim.interval, 'signed', 2, ` (${Number((100 * r.claim.confidence).toFixed(2))}%)`),
          pCell(r.claim.p),
          text(r.verdict === 'underpowered' ? 'underpowered' : r.significant ? 'yes' : 'no'),
          num(r.muTreat, 'fixed', 4),
          num(r.muNoise, 'fixed', 4),
          num(r.sdNoise, 'fixed', 4),
          int(r.nQuestions),
          int(r.invalidReplicates),
        ];
      }),
    ),
    { kind: 'heading', minor: true, text: `${name}: mixed model (category fixed effect, question random intercept)` },
  );
  const fit = analysis.mixedModel;
  if (isRefusal(fit)) out.push({ kind: 'text', text: failure(fit) });
  else
    out.push(
      para(
        `${fit.method}, reference level ${fit.reference}; ${fit.nObs} observations, ${fit.nGroups} questions; ` +
          `question variance ${fixed(fit.groupVariance, 6)}, residual variance ${fixed(fit.residualVariance, 6)}, ` +
          `log-likelihood ${fixed(fit.logLik, 3)}; converged: ${fit.converged ? 'yes' : 'no'}; boundary: ${fit.boundary ? 'yes' : 'no'}.`,
      ),
      table(
        ['term', 'estimate', 'SE', 'z', 'p'],
        fit.fixed.map((f) => [text(f.term), num(f.estimate, 'signed', 4), num(f.se, 'fixed', 4), num(f.z, 'fixed', 2), pCell(f.p)]),
      ),
    );
  out.push({ kind: 'heading', minor: true, text: `${name}: pairwise Welch t-tests (BH-corrected)` });
  const pairwise = analysis.pairwise;
  if (isRefusal(pairwise)) return [...out, { kind: 'text', text: failure(pairwise) }];
  const display = isRefusal(pairwise.letters) ? failure(pairwise.letters) : pairwise.order.map((o) => `${o.condition} ${o.letters ?? '—'}`).join(', ');
  out.push(
    para(
      `Compact letter display (ascending mean; conditions sharing a letter do not differ at α = ${alpha} after BH): ${display}.` +
        (pairwise.skipped.length > 0 ? ` Left out (fewer than 2 observations): ${pairwise.skipped.join(', ')}.` : ''),
    ),
    table(
      ['a', 'b', 'mean a − b', 't', 'df', 'p', 'p (BH)', 'significant'],
      pairwise.comparisons.map((c) => {
        const t = c.test;
        if (isRefusal(t)) return [text(c.a), text(c.b), num(c.difference, 'signed', 4), failed(t), ...Array.from({ length: 4 }, () => text('n/a'))];
        return [
          text(c.a),
          text(c.b),
          num(c.difference, 'signed', 4),
          num(t.t, 'fixed', 2),
          num(t.df, 'fixed', 1),
          pCell(t.p),
          pCell(t.pAdjusted),
          text(t.significant ? 'yes' : 'no'),
        ];
      }),
    ),
  );
  return out;
}

/** A chart row at the claim's interval; an unbounded end is drawn at the test-alone interval's. */
function claimRow(label: string, group: string, estimate: number, e: Pick<ElevationEstimate, 'claim' | 'ci'>): IntervalRow {
  const [lo, hi] = e.claim.interval;
  return { label, group, estimate, lo: Number.isFinite(lo) ? lo : e.ci[0], hi: Number.isFinite(hi) ? hi : e.ci[1] };
}

/** The d_rel forest and the tier plot (both metrics) of one target. */
function targetCharts(t: TargetAnalysis): DocumentBlock[] {
  const dRel: IntervalRow[] = [];
  const tiers: IntervalRow[] = [];
  for (const metric of ['dtw', 'sri'] as const) {
    const group = metric.toUpperCase();
    for (const e of t.metrics[metric].dRel) if (!isRefusal(e.result)) dRel.push(claimRow(e.condition, group, e.result.dRel, e.result));
    for (const c of t.metrics[metric].conditions)
      if (c.elevation && !isRefusal(c.elevation)) tiers.push(claimRow(`${c.tier} · ${c.condition}`, group, c.elevation.estimate, c.elevation));
  }
  const out: DocumentBlock[] = [];
  if (dRel.length > 0)
    out.push({
      kind: 'chart',
      spec: forestSpec(dRel, { xTitle: 'd_rel = (μ_treat − μ_noise) / σ_noise', rules: [0] }),
      caption:
        'Standardised drift over the pragmatic-noise floor per category, 95% question-cluster bootstrap CI (μ_noise and σ_noise re-estimated per replicate).',
    });
  if (tiers.length > 0)
    out.push({
      kind: 'chart',
      spec: forestSpec(tiers, { xTitle: 'elevation over the no-perturbation floor (μ / μ_floor − 1)', rules: [0] }),
      caption: 'Three tiers should separate: pragmatic noise near 0, persona cues intermediate, major life events largest (paper Fig. 5).',
    });
  return out;
}

function targetSection(target: TargetAnalysis, alpha: number): DocumentSection {
  const power = (['dtw', 'sri'] as const)
    .map((m) => {
      const p = target.metrics[m].power;
      const elevation = p.minimumDetectableElevation === null ? 'n/a' : `${(100 * p.minimumDetectableElevation).toFixed(1)} %`;
      return `${METRIC_NAMES[m]}: elevation ${elevation}, d_rel ${p.minimumDetectableDRel === null ? 'n/a' : fixed(p.minimumDetectableDRel, 2)}`;
    })
    .join('; ');
  return {
    title: target.target,
    blocks: [
      { kind: 'text', text: `${target.nQuestions} questions with scored observations.` },
      ...(target.design.underpowered ? [{ kind: 'text' as const, text: [{ strong: 'Underpowered design.' }, ` ${target.design.reason}.`] }] : []),
      { kind: 'text', text: `Minimum detectable effect at 80 % power (α = ${alpha}, from this run's bootstrap standard errors): ${power}.` },
      ...validityBlocks(target),
      ...targetCharts(target),
      ...convergenceBlocks(target),
      ...metricBlocks(target.metrics.dtw, alpha),
      ...metricBlocks(target.metrics.sri, alpha),
    ],
  };
}

function introSection(report: MemoryReport): DocumentSection {
  const { options } = report;
  const blocks: DocumentBlock[] = [
    para(
      `Drift of each sample's reasoning trajectory from the same model's no-memory reference (sample 0) for the same question: ` +
        `σ_DTW (discrete cost, ÷ max(n, m)) and SRI drift (α = 0.5); lower = more stable. ` +
        `Floor: ${options.floorCondition} (further no-memory samples). Percent elevation = μ/μ_floor − 1 and d_rel = (μ_treat − μ_noise)/σ_noise ` +
        `with ${Math.round(options.level * 100)}% question-level cluster-bootstrap percentile CIs (B = ${options.B}, seed ${options.seed}); ` +
        `d_rel p-values BH-corrected within the persona and within the life-event categories; α = ${options.alpha}; ` +
        `mixed model by ${options.method}; convergent validity threshold ρ ≥ ${options.convergenceThreshold} over the ${options.convergenceConditions === 'paper' ? "paper's condition set (noise and persona categories, pooled life events)" : 'all conditions but the floor'}.`,
    ),
  ];
  // The seed-independence warning first: it qualifies every number below.
  if (report.sampling !== undefined)
    blocks.push(
      para([
        'Sampling: seeds ',
        { code: report.sampling.seeding },
        ' — ',
        ...(report.sampling.independent ? [] : [{ strong: 'not independent' }, ': ']),
        `${report.sampling.note}.`,
      ]),
    );
  return { title: '', blocks };
}

function countsSection(report: MemoryReport): DocumentSection {
  const rate = (x: number | null) => num(x, 'share');
  return {
    id: 'memory-counts',
    title: 'Observations, dropouts and label quality',
    blocks: [
      { kind: 'text', text: `${report.counts.scored} of ${report.counts.observations} observations scored.` },
      table(
        [
          'target',
          'condition',
          'tier',
          'total',
          'scored',
          'empty',
          'failed',
          'invalid labels',
          'no reference',
          'dropout rate',
          'invalid rate',
          'steps',
          'unmapped rate',
        ],
        report.counts.byCondition.map((c) => [
          text(c.target),
          text(c.condition),
          text(c.tier),
          ...[c.total, c.scored, c.empty, c.failed, c.invalid, c.noReference].map(int),
          ...[c.dropoutRate, c.invalidRate].map(rate),
          int(c.steps),
          rate(c.unmappedRate),
        ]),
      ),
    ],
  };
}

function refusalsSection(report: MemoryReport): DocumentSection {
  const refusing = report.refusals.filter((r) => r.refused > 0 || (r.floorRate ?? 0) > 0);
  const title = 'Refusals (excluded from drift, compared with the floor)';
  if (refusing.length === 0) return { title, blocks: [{ kind: 'text', text: 'No answer was recognised as a refusal.' }] };
  return {
    title,
    blocks: [
      table(
        ['target', 'condition', 'tier', 'answered', 'refused', 'rate', 'floor rate', 'difference [95% CI]', 'p'],
        refusing.map((r) => {
          const d = r.difference;
          return [
            text(r.target),
            text(r.condition),
            text(r.tier),
            int(r.answered),
            int(r.refused),
            num(r.rate, 'share'),
            num(r.floorRate, 'share'),
            isRefusal(d) ? failed(d) : text(`${signed(100 * d.estimate, 1)} pts [${signed(100 * d.ci[0], 1)}, ${signed(100 * d.ci[1], 1)}]`),
            isRefusal(d) ? text('n/a') : pCell(d.p),
          ];
        }),
      ),
    ],
  };
}

/** Trajectories whose symbols diverge most from the no-memory reference, aligned by the DTW path. */
function examplesSection(observations: readonly MemoryObservation[], limit: number): DocumentSection {
  const scored = observations
    .filter((o) => o.status === 'scored' && o.baselineSymbols && o.symbols && typeof o.dtw === 'number' && o.tier !== 'noise')
    .sort((a, b) => (b.dtw as number) - (a.dtw as number) || a.question.localeCompare(b.question))
    .slice(0, limit);
  return {
    title: 'Trajectories that moved most',
    blocks: [
      {
        kind: 'examples',
        text: 'Steps aligned by the DTW path; highlighted symbols differ from the no-memory reference.',
        items: scored.map((o) => {
          const base = o.baselineSymbols as readonly string[];
          const inter = o.symbols as readonly string[];
          return {
            tags: [o.target, o.question, o.condition],
            title: `DTW ${fixed(o.dtw)}, SRI ${fixed(o.sri)}`,
            table: {
              columns: columns('no memory', `with ${o.condition}`),
              rows: dtw(base, inter).path.map(([i, j]) => [
                text(`${i + 1}. ${base[i] ?? ''}`),
                text(`${j + 1}. ${inter[j] ?? ''}`, { mark: base[i] !== inter[j] }),
              ]),
            },
          };
        }),
      },
    ],
  };
}

/** The run's own section: what happened to every generation cell (dropouts, steps, labeler attempts). */
export function collectionSection(runId: string, summary: MemoryCollectionSummary): DocumentSection {
  const list = (record: Record<string, number>) =>
    Object.entries(record)
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'none';
  const blocks: DocumentBlock[] = [
    { kind: 'text', text: ['Run ', { code: runId }, `: ${summary.generations} generation cells.`] },
    table(
      ['target', 'labelled', 'empty (dropout)', 'failed', 'refused', 'no steps', 'invalid labels', 'unlabelled'],
      summary.perTarget.map((t) => [text(t.target), ...[t.labelled, t.empty, t.failed, t.refused, t.no_steps, t.invalid, t.unlabelled].map(int)]),
    ),
    {
      kind: 'list',
      items: [
        `Step extraction (docs/decisions.md#d7): ${list(summary.stepMethods)}; from ${list(summary.stepSources)}.`,
        `Labeler attempt that parsed (1 = first answer): ${list(summary.labelerAttempts)}; unknown labels mapped to unmapped: ${summary.coercedUnknownLabels}.`,
        `Invalid labelings by the failure of their last attempt: ${list(summary.labelerFailures)}.`,
        `Step cap (steps.maxSteps ${summary.stepCap.maxSteps}): ${summary.stepCap.answersCut} answers cut, ${summary.stepCap.stepsCut} steps not labeled.`,
      ],
    },
  ];
  const judge = summary.refusalJudge;
  if (judge !== undefined) {
    const a = judge.agreement;
    blocks.push(
      para([
        'Refusal judge ',
        { code: judge.model },
        ` (its verdict decides; the detector decides where it has none): ${judge.answers} answers, ${judge.invalid} verdicts invalid after re-asks, ${judge.unanswered} unanswered; ${judge.refusals} refusals counted. ` +
          `Agreement with the detector on ${a.judged} judged answers: both refusal ${a.both}, judge only ${a.judgeOnly}, detector only ${a.detectorOnly}, neither ${a.neither}` +
          `${a.agreement === null ? '' : ` (${(100 * a.agreement).toFixed(1)} % agree, κ ${a.kappa === null ? 'n/a' : a.kappa.toFixed(2)})`}.`,
      ]),
    );
  }
  for (const warning of summary.formatWarnings) blocks.push({ kind: 'text', text: [{ strong: 'Format warning.' }, ` ${warning}.`] });
  if (summary.formatCompliance.length > 0)
    blocks.push(
      { kind: 'text', text: ['Step format per target and condition (share in ', { code: '<step_N>' }, ' tags or a reasoning trace):'] },
      table(
        ['target', 'condition', 'answered', 'in step format', 'methods'],
        summary.formatCompliance.map((c) => [text(c.target), text(c.condition), int(c.answered), num(c.compliant, 'share', 0), text(list(c.methods))]),
      ),
    );
  return { title: 'Run', blocks };
}

/** What the sections read besides the report: the run's collection (its summary, and its samples for the examples). */
export interface MemoryDocumentInput {
  runId: string;
  collection: MemoryCollection;
}

export function memorySections(report: MemoryReport, input?: MemoryDocumentInput): DocumentSection[] {
  return [
    introSection(report),
    countsSection(report),
    refusalsSection(report),
    ...report.targets.map((t) => targetSection(t, report.options.alpha)),
    ...(input ? [examplesSection(collectionObservations(input.collection, 'reference'), 3), collectionSection(input.runId, input.collection.summary)] : []),
  ];
}

export function memoryDocument(report: MemoryReport, input: MemoryDocumentInput): AuditDocumentPart {
  return { verdicts: memoryVerdicts(report), sections: memorySections(report, input) };
}

/** The memory report as Markdown (`echolens memory report`; the library's `renderMemoryMarkdown`). */
export function renderMemoryMarkdown(report: MemoryReport, title = 'Memory drift (DriftLens) report', input?: MemoryDocumentInput): string {
  return documentMarkdown(title, memorySections(report, input));
}

/** An agreement share (2 decimals) or κ (3), or why it could not be computed. */
const agreementValue = (value: LabelAgreement['exact'], format: 'share' | 'fixed'): DocumentCell =>
  typeof value === 'number' ? num(value, format, format === 'share' ? 2 : 3) : text(`n/a (${value.error})`);

/** A pair of labelings' steps, agreement, κ, invalid and unpaired steps. */
const agreementCells = (a: LabelAgreement): DocumentCell[] => [
  int(a.n),
  agreementValue(a.exact, 'share'),
  agreementValue(a.kappa, 'fixed'),
  int(a.invalid),
  int(a.unpaired),
];

/** `memory labeler-check` (App. C.4, Tables 9–11) as a document: the labelings, then each kind of agreement the check made. */
export function labelerCheckSections(check: LabelerCheckCollection, reliability: LabelerReliability): DocumentSection[] {
  const tail = ['steps', 'exact agreement', 'κ', 'steps with an invalid side', 'unpaired steps'];
  const sections: DocumentSection[] = [
    {
      title: '',
      blocks: [
        para([
          'Relabelling of run ',
          { code: check.memoryRunId },
          ' (check run ',
          { code: check.checkRunId },
          "): exact match of Category/Subcategory labels per step, and Cohen's κ. t0 = temperature 0; t1-a / t1-b = two independent labelings at temperature 1; wordings: original and alternative definitions.",
        ]),
      ],
    },
    {
      title: 'Labelings',
      blocks: [
        table(
          ['labeler', 'run', 'wording', 'responses', 'labelled', 'invalid after re-asks', 'unlabelled'],
          check.passes.map((p) => [text(p.labeler), text(p.run), text(p.wording), int(p.items), int(p.labelled), int(p.invalid), int(p.unlabelled)]),
          [3, 4, 5, 6],
        ),
      ],
    },
  ];
  /** A table of pairs of labelings (when the check made any), its first four columns naming each pair. */
  const pairs = <T extends LabelAgreement>(title: string, heads: string[], rows: readonly T[], names: (a: T) => string[], after: DocumentBlock[] = []) => {
    if (rows.length === 0) return;
    const cells = rows.map((a) => [...names(a).map((n) => text(n)), ...agreementCells(a)]);
    sections.push({ title, blocks: [table([...heads, ...tail], cells, [4, 5, 6, 7, 8]), ...after] });
  };
  pairs(
    'Cross-model agreement (Table 9)',
    ['labeler A', 'labeler B', 'wording', 'run'],
    reliability.crossModel,
    (a) => [a.labelerA, a.labelerB, a.wording, a.run],
    reliability.crossModelMean.map(
      (m): DocumentBlock =>
        para(
          `Mean pairwise exact agreement (${m.wording}, ${m.run}, ${m.pairs} pairs): ${m.meanExact === null ? 'n/a' : `${(100 * m.meanExact).toFixed(2)}%`}.`,
        ),
    ),
  );
  pairs('Within-model agreement (Table 10)', ['labeler', 'wording', 'run A', 'run B'], reliability.withinModel, (a) => [a.labeler, a.wording, a.runA, a.runB]);
  pairs('Definition robustness (Table 11)', ['labeler', 'run', 'wording A', 'wording B'], reliability.wordings, (a) => [
    a.labeler,
    a.run,
    a.wordingA,
    a.wordingB,
  ]);
  return sections;
}

/** `memory labeler-check`'s Markdown (the shared renderer). */
export function renderLabelerCheckMarkdown(check: LabelerCheckCollection, reliability: LabelerReliability): string {
  return documentMarkdown('Labeler reliability (DriftLens App. C.4)', labelerCheckSections(check, reliability));
}

/** A rate with its Monte Carlo SE in percent, or n/a. */
const calibrationRate = (r: RateWithError | null) => (r === null ? 'n/a' : `${(100 * r.rate).toFixed(1)} % ± ${(100 * r.mcSE).toFixed(1)}`);

/** `memory calibrate` as a document: the design, then per scenario every test's false-positive rate (or power), coverage and SE, then the MDEs. */
export function memoryCalibrationSections(calibration: MemoryCalibration): DocumentSection[] {
  const d = calibration.design;
  const nullRun = calibration.scenarios.find((s) => s.scenario.name === 'null');
  const sections: DocumentSection[] = [
    {
      title: '',
      blocks: [
        para([
          `Design: ${d.questions} questions × ${d.conditions} conditions, k = ${d.k}, ${d.stimuliPerCategory} stimulus per category, seeds `,
          { code: d.sampleSeeds },
          ', pairing ',
          { code: d.pairing },
          `; B = ${d.B} per simulated report; seed-honouring simulated sampler with per-step noise ${d.samplingNoise} (same seed + same question = same answer).`,
        ]),
        { kind: 'text', text: `Targets: ${d.targets} — ${d.targetsNote}.` },
      ],
    },
  ];
  for (const scenario of calibration.scenarios) {
    const isNull = scenario === nullRun;
    const f = scenario.scenario.flip;
    sections.push({
      title: `Scenario \`${scenario.scenario.name}\` (${scenario.replicates} simulated runs; memory flips a step with probability noise ${f.noise}, persona ${f.persona}, life events ${f.life_event})`,
      blocks: [
        para(
          `Per-condition tests below α = ${calibration.alpha} per run (mean share ± MC SE): ${(100 * scenario.perConditionShare.mean).toFixed(1)} % ± ${(100 * scenario.perConditionShare.mcSE).toFixed(1)}. ` +
            `Runs with a BH-significant d_rel: ${calibrationRate(scenario.dRelFamilyWise)}; with a BH-significant Welch comparison: ${calibrationRate(scenario.pairwiseFamilyWise)}.`,
        ),
        table(
          [
            'test',
            'runs tested',
            'refused',
            isNull ? 'false-positive rate' : 'rejection rate (power)',
            isNull ? 'within nominal' : '',
            '95 % CI coverage',
            'mean SE',
          ],
          scenario.tests.map((t) => {
            const within = isNull && t.rejection !== null ? withinNominal(t.rejection, calibration.alpha) : null;
            return [
              text(t.test),
              int(t.replicates),
              int(t.refused),
              text(calibrationRate(t.rejection)),
              within === null ? text('') : text(within ? 'yes' : 'no', { mark: !within }),
              text(isNull ? calibrationRate(t.coverage) : 'n/a'),
              t.meanStandardError === null ? text('n/a') : num(t.meanStandardError, 'fixed', 4),
            ];
          }),
          [1, 2, 3, 5, 6],
        ),
      ],
    });
  }
  if (calibration.minimumDetectable.length > 0) {
    sections.push({
      title: 'Minimum detectable effect at 80 % power',
      blocks: [
        {
          kind: 'list',
          items: calibration.minimumDetectable.map(
            (m) =>
              `${m.metric} ${m.test}: ${m.test === 'elevation' ? `${(100 * m.mde).toFixed(1)} % elevation over the floor` : `d_rel ${m.mde.toFixed(2)}`} (mean SE ${m.meanSE.toFixed(4)})`,
          ),
        },
      ],
    });
  }
  return sections;
}

/** `memory calibrate`'s Markdown (the shared renderer). */
export function renderMemoryCalibrationMarkdown(calibration: MemoryCalibration): string {
  return documentMarkdown('Memory drift: design calibration (SIMULATED, measures no model)', memoryCalibrationSections(calibration));
}
