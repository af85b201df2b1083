import type { IntervalEstimate, MemoryMaybe, MemoryMetric, MemoryReport, MetricAnalysis, TargetAnalysis, ValidityCheck, ValidityVerdict } from './analysis.js';
import type { LabelAgreement, LabelerReliability } from './reliability.js';
import { isRefusal } from '../core/maybe.js';
import { markdownText } from '../report/markdown-text.js';
import { fixed as num, percent, signed } from '../report/format.js';

/** Markdown rendering of a MemoryReport: the same numbers as the JSON, for people. */

const METRIC_NAMES: Record<MemoryMetric, string> = { dtw: 'DTW', sri: 'SRI' };

/** Text from data inside a table cell or heading (Markdown backslash escapes; see markdownText). */
export function markdownCell(text: string): string {
  return markdownText(text);
}

const cell = markdownCell;
const pValue = (p: number) => (p === 0 ? '0' : p < 0.001 ? p.toExponential(2) : p.toFixed(3));
const rate = (x: number | null) => (x === null ? '—' : `${(100 * x).toFixed(1)}%`);
const failure = (value: { error: string }) => `n/a (${cell(value.error)})`;

function maybeNumber(value: MemoryMaybe<number> | null, digits = 3): string {
  if (value === null) return '—';
  if (isRefusal(value)) return failure(value);
  return signed(value, digits);
}

function elevationText(value: MemoryMaybe<IntervalEstimate> | null): [string, string] {
  if (value === null) return ['— (floor)', '—'];
  if (isRefusal(value)) return [failure(value), 'n/a'];
  return [`${percent(value.estimate)} [${percent(value.ci[0])}, ${percent(value.ci[1])}]`, pValue(value.p)];
}

function table(header: string[], rows: string[][]): string {
  if (rows.length === 0) return '_No data._\n';
  return `${[`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n')}\n`;
}

function checkRow(criterion: string, check: ValidityCheck): string[] {
  return [
    criterion,
    check.metric === 'dtw~sri' ? 'DTW ~ SRI' : METRIC_NAMES[check.metric],
    cell(check.subject),
    check.estimate === null ? 'n/a' : check.metric === 'dtw~sri' ? num(check.estimate) : percent(check.estimate),
    check.p === null ? 'n/a' : pValue(check.p),
    check.met === null ? `undetermined (${cell(check.error ?? 'not computed')})` : check.met ? 'yes' : 'no',
  ];
}

function validitySection(target: TargetAnalysis, out: string[]): void {
  const verdicts: Array<[string, ValidityVerdict]> = [
    ['Specificity', target.validity.specificity],
    ['Sensitivity', target.validity.sensitivity],
    ['Convergent validity', target.validity.convergent],
  ];
  out.push(`### Instrument validity (§3): ${target.validity.overall.toUpperCase()}`, '');
  out.push(
    table(
      ['check', 'verdict', 'reason'],
      verdicts.map(([name, v]) => [name, v.verdict.toUpperCase(), cell(v.reason)]),
    ),
  );
  out.push('Checks (elevation over the floor for specificity and sensitivity; Spearman ρ for convergent validity):', '');
  out.push(
    table(
      ['check', 'metric', 'subject', 'estimate', 'p', 'met'],
      verdicts.flatMap(([name, v]) => v.checks.map((check) => checkRow(name, check))),
    ),
  );
}

function convergenceSection(target: TargetAnalysis, out: string[]): void {
  out.push('### Convergent validity (Table 1)', '');
  const c = target.convergence;
  if (isRefusal(c)) {
    out.push(`${failure(c)}`, '');
    return;
  }
  const spearman = isRefusal(c.spearman) ? failure(c.spearman) : `ρ = ${num(c.spearman.rho)} (p = ${pValue(c.spearman.p)})`;
  const pearson = isRefusal(c.pearson) ? failure(c.pearson) : `r = ${num(c.pearson.r)} (p = ${pValue(c.pearson.p)})`;
  out.push(`Over ${c.conditions.length} conditions: Spearman ${spearman}; Pearson ${pearson}.`, '');
  out.push(
    `Tiers by ascending mean: DTW ${c.tierOrder.dtw.join(' < ')}; SRI ${c.tierOrder.sri.join(' < ')} ` +
      `(${c.tierOrder.identical ? 'same order' : 'different order'}).`,
    '',
  );
  out.push(
    table(
      ['condition', 'DTW mean', 'SRI mean'],
      c.conditions.map((id, i) => [cell(id), num(c.dtwMeans[i] as number, 4), num(c.sriMeans[i] as number, 4)]),
    ),
  );
}

function metricSection(analysis: MetricAnalysis, alpha: number, out: string[]): void {
  const name = METRIC_NAMES[analysis.metric];
  out.push(`### ${name}`, '');
  const floor = analysis.floor;
  const noise = analysis.noise;
  out.push(
    `Floor: ${
      isRefusal(floor)
        ? failure(floor)
        : `${cell(floor.condition)} mean ${num(floor.mean, 4)}, SD ${floor.sd === null ? 'n/a' : num(floor.sd, 4)}, n = ${floor.n}, ${floor.nQuestions} questions`
    }. Pragmatic noise (μ_noise, σ_noise): ${
      isRefusal(noise)
        ? failure(noise)
        : `${noise.conditions.map(cell).join(', ')}: mean ${num(noise.mean, 4)}, SD ${noise.sd === null ? 'n/a' : num(noise.sd, 4)}, n = ${noise.n}`
    }.`,
    '',
  );

  const letters = new Map<string, string>();
  if (!isRefusal(analysis.pairwise)) {
    for (const o of analysis.pairwise.order) if (o.letters !== null) letters.set(o.condition, o.letters);
  }
  out.push(`#### ${name}: conditions (Fig. 3, Fig. 5)`, '');
  out.push(
    table(
      ['condition', 'tier', 'n', 'questions', 'mean', 'SD', "Cohen's d vs floor", 'elevation [95% CI]', 'p', 'letters'],
      analysis.conditions.map((c) => {
        const [elevation, p] = elevationText(c.elevation);
        return [
          cell(c.condition),
          c.tier,
          String(c.n),
          String(c.nQuestions),
          num(c.mean, 4),
          c.sd === null ? 'n/a' : num(c.sd, 4),
          maybeNumber(c.cohensD),
          elevation,
          p,
          letters.get(c.condition) ?? '—',
        ];
      }),
    ),
  );
  out.push(`#### ${name}: tiers (pooled)`, '');
  out.push(
    table(
      ['tier', 'conditions', 'n', 'questions', 'mean', "Cohen's d vs floor", 'elevation [95% CI]', 'p'],
      analysis.tiers.map((t) => {
        const [elevation, p] = elevationText(t.elevation);
        return [t.tier, String(t.conditions.length), String(t.n), String(t.nQuestions), num(t.mean, 4), maybeNumber(t.cohensD), elevation, p];
      }),
    ),
  );

  out.push(`#### ${name}: d_rel per category (Fig. 4)`, '');
  out.push(
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
        if (isRefusal(r)) return [cell(entry.condition), entry.tier, failure(r), 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'n/a'];
        return [
          cell(entry.condition),
          entry.tier,
          `${signed(r.dRel, 2)} [${signed(r.claim.interval[0], 2, '−∞')}, ${signed(r.claim.interval[1], 2, '+∞')}] (${Number((100 * r.claim.confidence).toFixed(2))}%)`,
          pValue(r.claim.p),
          r.verdict === 'underpowered' ? 'underpowered' : r.significant ? 'yes' : 'no',
          num(r.muTreat, 4),
          num(r.muNoise, 4),
          num(r.sdNoise, 4),
          String(r.nQuestions),
          String(r.invalidReplicates),
        ];
      }),
    ),
  );

  out.push(`#### ${name}: mixed model (category fixed effect, question random intercept)`, '');
  const fit = analysis.mixedModel;
  if (isRefusal(fit)) {
    out.push(failure(fit), '');
  } else {
    out.push(
      `${fit.method}, reference level ${cell(fit.reference)}; ${fit.nObs} observations, ${fit.nGroups} questions; ` +
        `question variance ${num(fit.groupVariance, 6)}, residual variance ${num(fit.residualVariance, 6)}, ` +
        `log-likelihood ${num(fit.logLik, 3)}; converged: ${fit.converged ? 'yes' : 'no'}; boundary: ${fit.boundary ? 'yes' : 'no'}.`,
      '',
    );
    out.push(
      table(
        ['term', 'estimate', 'SE', 'z', 'p'],
        fit.fixed.map((f) => [cell(f.term), signed(f.estimate, 4), num(f.se, 4), num(f.z, 2), pValue(f.p)]),
      ),
    );
  }

  out.push(`#### ${name}: pairwise Welch t-tests (BH-corrected)`, '');
  const pairwise = analysis.pairwise;
  if (isRefusal(pairwise)) {
    out.push(failure(pairwise), '');
    return;
  }
  const display = isRefusal(pairwise.letters) ? failure(pairwise.letters) : pairwise.order.map((o) => `${cell(o.condition)} ${o.letters ?? '—'}`).join(', ');
  out.push(
    `Compact letter display (ascending mean; conditions sharing a letter do not differ at α = ${alpha} after BH): ` +
      `${display}.` +
      (pairwise.skipped.length > 0 ? ` Left out (fewer than 2 observations): ${pairwise.skipped.map(cell).join(', ')}.` : ''),
    '',
  );
  out.push(
    table(
      ['a', 'b', 'mean a − b', 't', 'df', 'p', 'p (BH)', 'significant'],
      pairwise.comparisons.map((c) => {
        const t = c.test;
        if (isRefusal(t)) return [cell(c.a), cell(c.b), signed(c.difference, 4), failure(t), 'n/a', 'n/a', 'n/a', 'n/a'];
        return [cell(c.a), cell(c.b), signed(c.difference, 4), num(t.t, 2), num(t.df, 1), pValue(t.p), pValue(t.pAdjusted), t.significant ? 'yes' : 'no'];
      }),
    ),
  );
}

export function renderMemoryMarkdown(report: MemoryReport, title = 'Memory drift (DriftLens) report'): string {
  const { options } = report;
  const out: string[] = [`# ${cell(title)}`, ''];
  out.push(
    `Drift of each sample's reasoning trajectory from the same model's no-memory reference (sample 0) for the same question: ` +
      `σ_DTW (discrete cost, ÷ max(n, m)) and SRI drift (α = 0.5); lower = more stable. ` +
      `Floor: ${cell(options.floorCondition)} (further no-memory samples). Percent elevation = μ/μ_floor − 1 and d_rel = (μ_treat − μ_noise)/σ_noise ` +
      `with ${Math.round(options.level * 100)}% question-level cluster-bootstrap percentile CIs (B = ${options.B}, seed ${options.seed}); ` +
      `d_rel p-values BH-corrected within the persona and within the life-event categories; α = ${options.alpha}; ` +
      `mixed model by ${options.method}; convergent validity threshold ρ ≥ ${options.convergenceThreshold} over the ${options.convergenceConditions === 'paper' ? "paper's condition set (noise and persona categories, pooled life events)" : 'all conditions but the floor'}.`,
    '',
  );

  out.push('## Observations, dropouts and label quality', '');
  out.push(`${report.counts.scored} of ${report.counts.observations} observations scored.`, '');
  out.push(
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
        cell(c.target),
        cell(c.condition),
        c.tier,
        String(c.total),
        String(c.scored),
        String(c.empty),
        String(c.failed),
        String(c.invalid),
        String(c.noReference),
        rate(c.dropoutRate),
        rate(c.invalidRate),
        String(c.steps),
        rate(c.unmappedRate),
      ]),
    ),
  );

  if (report.sampling !== undefined) {
    const sampling = report.sampling;
    out.push(`Sampling: seeds \`${sampling.seeding}\` — ${sampling.independent ? '' : '**not independent**: '}${cell(sampling.note)}.`, '');
  }

  const refusing = report.refusals.filter((r) => r.refused > 0 || (r.floorRate ?? 0) > 0);
  out.push('## Refusals (excluded from drift, compared with the floor)', '');
  if (refusing.length === 0) {
    out.push('No answer was recognised as a refusal.', '');
  } else {
    out.push(
      table(
        ['target', 'condition', 'tier', 'answered', 'refused', 'rate', 'floor rate', 'difference [95% CI]', 'p'],
        refusing.map((r) => {
          const d = r.difference;
          return [
            cell(r.target),
            cell(r.condition),
            r.tier,
            String(r.answered),
            String(r.refused),
            r.rate === null ? 'n/a' : `${(100 * r.rate).toFixed(1)}%`,
            r.floorRate === null ? 'n/a' : `${(100 * r.floorRate).toFixed(1)}%`,
            isRefusal(d) ? failure(d) : `${signed(100 * d.estimate, 1)} pts [${signed(100 * d.ci[0], 1)}, ${signed(100 * d.ci[1], 1)}]`,
            isRefusal(d) ? 'n/a' : pValue(d.p),
          ];
        }),
      ),
    );
  }

  for (const target of report.targets) {
    out.push(`## ${cell(target.target)}`, '');
    out.push(`${target.nQuestions} questions with scored observations.`, '');
    if (target.design.underpowered) out.push(`**Underpowered design.** ${cell(target.design.reason)}.`, '');
    const power = (['dtw', 'sri'] as const)
      .map((m) => {
        const p = target.metrics[m].power;
        const elevation = p.minimumDetectableElevation === null ? 'n/a' : `${(100 * p.minimumDetectableElevation).toFixed(1)} %`;
        const dRel = p.minimumDetectableDRel === null ? 'n/a' : num(p.minimumDetectableDRel, 2);
        return `${METRIC_NAMES[m]}: elevation ${elevation}, d_rel ${dRel}`;
      })
      .join('; ');
    out.push(`Minimum detectable effect at 80 % power (α = ${options.alpha}, from this run's bootstrap standard errors): ${power}.`, '');
    validitySection(target, out);
    convergenceSection(target, out);
    for (const metric of ['dtw', 'sri'] as const) metricSection(target.metrics[metric], options.alpha, out);
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/gu, '\n\n')
    .trimEnd()}\n`;
}

function agreementCells(a: LabelAgreement): string[] {
  return [
    String(a.n),
    isRefusal(a.exact) ? failure(a.exact) : `${(100 * a.exact).toFixed(2)}%`,
    isRefusal(a.kappa) ? failure(a.kappa) : num(a.kappa),
    String(a.invalid),
    String(a.unpaired),
  ];
}

/** Markdown tables of the labeler reliability of App. C.4 (Tables 9–11). */
export function renderReliabilityMarkdown(reliability: LabelerReliability, title = 'Ontology labeling agreement (App. C.4)'): string {
  const tail = ['steps', 'exact agreement', "Cohen's κ", 'invalid', 'unpaired'];
  const out: string[] = [`## ${cell(title)}`, ''];
  out.push('### Cross-model agreement (Table 9)', '');
  out.push(
    table(
      ['wording', 'run', 'labeler A', 'labeler B', ...tail],
      reliability.crossModel.map((c) => [cell(c.wording), cell(c.run), cell(c.labelerA), cell(c.labelerB), ...agreementCells(c)]),
    ),
  );
  out.push(
    table(
      ['wording', 'run', 'labeler pairs', 'mean exact agreement'],
      reliability.crossModelMean.map((m) => [
        cell(m.wording),
        cell(m.run),
        String(m.pairs),
        m.meanExact === null ? 'n/a' : `${(100 * m.meanExact).toFixed(2)}%`,
      ]),
    ),
  );
  out.push('### Within-model agreement between runs (Table 10)', '');
  out.push(
    table(
      ['labeler', 'wording', 'run A', 'run B', ...tail],
      reliability.withinModel.map((w) => [cell(w.labeler), cell(w.wording), cell(w.runA), cell(w.runB), ...agreementCells(w)]),
    ),
  );
  out.push('### Agreement between ontology wordings (Table 11)', '');
  out.push(
    table(
      ['labeler', 'run', 'wording A', 'wording B', ...tail],
      reliability.wordings.map((w) => [cell(w.labeler), cell(w.run), cell(w.wordingA), cell(w.wordingB), ...agreementCells(w)]),
    ),
  );
  return `${out
    .join('\n')
    .replace(/\n{3,}/gu, '\n\n')
    .trimEnd()}\n`;
}
