import type { AuditHeadlineTarget } from '../experiment/audit.js';
import type { DocumentVerdict } from '../report/document/types.js';
import type { GapEstimate, Maybe, PersonaObservation, PersonaReport, VerdictKind } from './analysis.js';
import { barSpec, forestSpec, type IntervalRow, scatterSpec, shortLabel, trajectorySpec } from '../report/charts.js';
import { figure, html, type RawHtml, table } from '../report/html.js';
import { vegaLiteToSvg } from '../report/svg.js';
import { referenceHtml } from './reference-render.js';
import { extrasHtml } from './extras-render.js';
import { fixed as f3, pValue as pv, share as pct, signed as f2 } from '../report/format.js';
import { claimInterval, claimP, confidenceLabel, confidenceNote } from './claim-text.js';

/** The persona-drift (ContextEcho) part of the HTML report. */

export interface PersonaSessionInfo {
  id: string;
  file?: string;
  compactions?: number[];
  /** The goal chosen for goal re-injection (run manifest). */
  goal?: { text: string; messageIndex: number; source: string } | null;
  /** Positions whose context follows a compaction whose summary is absent (Codex remote compaction). */
  missingSummaries?: Array<{ position: string; compaction: number; note: string }>;
}

const isGap = (g: Maybe<GapEstimate>): g is GapEstimate => !('error' in g);
/** An estimate with the interval of its claim (the one that agrees with the deciding p). */
const gapText = (g: Maybe<GapEstimate>) =>
  isGap(g) ? `${f2(g.estimate)} [${f2(claimInterval(g)[0])}, ${f2(claimInterval(g)[1])}]${confidenceNote(g.claim)}` : `n/a (${g.error})`;

function intervalRows<T>(items: readonly T[], label: (t: T) => string, gap: (t: T) => Maybe<GapEstimate>, group?: (t: T) => string): IntervalRow[] {
  return items.flatMap((item) => {
    const g = gap(item);
    return isGap(g)
      ? [{ label: label(item), estimate: g.estimate, lo: claimInterval(g)[0], hi: claimInterval(g)[1], ...(group ? { group: group(item) } : {}) }]
      : [];
  });
}

const TONE: Record<VerdictKind, AuditHeadlineTarget['tone']> = {
  drift: 'alert',
  'no detectable drift': 'ok',
  'underpowered for this design': 'neutral',
  'not computable': 'neutral',
};

/**
 * The first screen of a persona run: per target and judge, the verdict, the
 * position-averaged gap Δ with its CI, its sign-flip test, the two arm means
 * and the onset — every number read from `report.drift`, as in the JSON. A
 * fragile verdict (one session carries it) says so in the verdict itself, as the gate does.
 */
export function personaVerdicts(report: PersonaReport): DocumentVerdict[] {
  return report.drift.map((d): DocumentVerdict => {
    const g = d.gap;
    const numbers: DocumentVerdict['numbers'] = [
      {
        label: isGap(g) && g.claim.family > 1 ? `drift gap Δ [${confidenceLabel(g.claim)} CI]` : 'drift gap Δ [95% CI]',
        value: isGap(g) ? `${f2(g.estimate)} [${f2(claimInterval(g)[0])}, ${f2(claimInterval(g)[1])}]` : gapText(g),
        detail: isGap(g) ? `filler − real, judge points (0–3), over ${g.units} ${g.level}s${d.strongDrift ? '; strong drift' : ''}` : undefined,
      },
    ];
    const test = 'error' in d.signFlip ? null : d.signFlip;
    if (test && isGap(g))
      numbers.push({
        label: g.claim.family > 1 ? `Holm p (over ${g.claim.family} targets)` : 'sign-flip p',
        value: pv(claimP(g)),
        detail: `${test.n} ${test.level}s, ${test.method}${g.claim.family > 1 ? `; sign-flip p alone ${pv(g.claim.pRaw)}` : ''}`,
      });
    if (isGap(g)) numbers.push({ label: 'real / filler mean score', value: `${f3(g.real.estimate)} / ${f3(g.filler.estimate)}` });
    numbers.push({
      label: 'onset',
      value: d.onset ? `${d.onset.position} (step ${d.onset.positionValue})` : '—',
      detail: d.onset
        ? `first position with Holm p ${pv(d.onset.pHolm)}`
        : (report.onset?.find((o) => o.target === d.target && o.judge === d.judge)?.reason ?? 'no position significant'),
    });
    const v = d.verdict;
    return {
      subject: `${d.target} · judged by ${d.judge}`,
      verdict: v.fragile ? `${v.kind} (fragile: driven by session ${v.drivenBy})` : v.kind,
      tone: TONE[v.kind],
      estimate: isGap(g) ? g.estimate : null,
      interval: isGap(g) ? [claimInterval(g)[0], claimInterval(g)[1]] : null,
      p: test?.p ?? null,
      pAdjusted: test?.pHolm ?? null,
      mde: v.mde,
      effectOfInterest: report.options.strongThreshold,
      underpowered: v.kind === 'underpowered for this design',
      fragile: v.fragile === true,
      drivenBy: v.drivenBy ?? null,
      numbers: numbers.map((n) => (n.detail === undefined ? { label: n.label, value: n.value } : n)),
    };
  });
}

/** Per session: the re-injected goal, and every position whose context lacks a compaction summary. */
function sessionContextNotes(sessions: readonly PersonaSessionInfo[]): RawHtml[] {
  const out: RawHtml[] = [];
  for (const s of sessions) {
    const missing = s.missingSummaries ?? [];
    if (missing.length > 0) {
      out.push(
        html`<p class="note">Session ${s.id}: ${missing.length} position(s) follow a Codex remote compaction whose summary is encrypted, so their real context lacks it (${missing.map((m) => `${m.position}: C${m.compaction}`).join(', ')}).</p>`,
      );
    }
    if (s.goal)
      out.push(html`<p class="note">Session ${s.id}: goal for re-injection from message ${s.goal.messageIndex} (${s.goal.source}): “${s.goal.text}”.</p>`);
  }
  return out;
}

export async function personaSection(
  report: PersonaReport,
  observations: readonly PersonaObservation[],
  sessions: readonly PersonaSessionInfo[],
): Promise<RawHtml> {
  const parts: RawHtml[] = [];
  const threshold = report.options.strongThreshold;
  if (report.verdicts.length > 0) {
    parts.push(html`<h3 id="persona-verdicts">Verdict per target</h3>`);
    parts.push(
      table(report.verdicts, [
        { header: 'target', value: (v) => v.target },
        { header: 'judge', value: (v) => v.judge },
        { header: 'verdict', value: (v) => v.kind },
        { header: 'numbers', value: (v) => v.text },
      ]),
    );
  }
  parts.push(
    html`<p class="note">Drift gap Δ = mean judge score (0–3, 3 = fully assistant-like) on the length- and structure-matched filler arm minus on the real-session arm; positive Δ = drift. Headline cell: ${report.design.headline}. Inference is at the sampled unit (positions in one session, sessions when there are several): a sign-flip test of the unit means and its inverted 95% interval (it excludes 0 exactly when p < 0.05). Strong drift: |Δ| ≥ ${threshold}. Probe battery: ${report.options.primaryCategory ?? 'all categories'}.</p>`,
  );

  // Forest of position-averaged gaps across targets.
  const forestRows = intervalRows(
    report.drift,
    (d) => `${d.target} · ${d.judge}`,
    (d) => d.gap,
  );
  parts.push(html`<h3 id="persona-forest">Position-averaged drift gap per target</h3>`);
  if (forestRows.length > 0) {
    parts.push(
      figure(
        await vegaLiteToSvg(forestSpec(forestRows, { xTitle: 'Δ = filler − real (judge points)', rules: [0, -threshold, threshold] })),
        `Point = Δ, bar = the interval that agrees with the deciding p at the sampled unit (95%, or Holm-consistent across targets); dashed lines at 0 and ±${threshold}.`,
      ),
    );
  }
  parts.push(
    table(report.drift, [
      { header: 'target', value: (d) => d.target },
      { header: 'judge', value: (d) => d.judge },
      { header: 'Δ [95% CI]', value: (d) => gapText(d.gap), numeric: true },
      { header: 'real', value: (d) => (isGap(d.gap) ? f3(d.gap.real.estimate) : 'n/a'), numeric: true },
      { header: 'filler', value: (d) => (isGap(d.gap) ? f3(d.gap.filler.estimate) : 'n/a'), numeric: true },
      { header: 'strong drift', value: (d) => html`<span class="${d.strongDrift ? 'yes' : 'no'}">${d.strongDrift ? 'yes' : 'no'}</span>` },
      { header: 'p (Holm across targets)', value: (d) => (isGap(d.gap) ? pv(claimP(d.gap)) : 'n/a'), numeric: true },
      { header: 'onset', value: (d) => (d.onset ? `${d.onset.position} (${d.onset.positionValue})` : '—') },
    ]),
  );

  const reference = referenceHtml(report);
  if (reference) parts.push(reference);
  parts.push(...(await extrasHtml(report)));

  // Trajectories with compaction markers, one chart per session.
  const sessionIds = [...new Set(report.drift.flatMap((d) => d.byPosition.map((p) => p.session)))].sort();
  for (const session of sessionIds) {
    const rows = report.drift.flatMap((d) =>
      d.byPosition
        .filter((p) => p.session === session && isGap(p.gap))
        .map((p) => {
          const g = p.gap as GapEstimate;
          return { series: `${d.target} · ${d.judge}`, x: p.positionValue, estimate: g.estimate, lo: g.ci[0], hi: g.ci[1] };
        }),
    );
    if (rows.length === 0) continue;
    const info = sessions.find((s) => s.id === session);
    const markers = (info?.compactions ?? []).map((x, i) => ({ x, label: `C${i + 1}` }));
    parts.push(html`<h3>Drift trajectory — session ${session}${info?.file ? html` <span class="muted">(${info.file})</span>` : ''}</h3>`);
    parts.push(
      figure(
        await vegaLiteToSvg(trajectorySpec(rows, markers, { xTitle: 'position (agent steps)', yTitle: 'Δ (judge points)' })),
        'Δ per snapshot position with its 95% interval over probes; red dashed lines mark context compactions.',
      ),
    );
  }
  parts.push(...sessionContextNotes(sessions));

  // Per-category gaps.
  const categoryRows = report.drift.flatMap((d) =>
    intervalRows(
      d.byCategory,
      (c) => c.category,
      (c) => c.gap,
      () => `${d.target} · ${d.judge}`,
    ),
  );
  if (categoryRows.length > 0) {
    parts.push(html`<h3>Drift by probe category</h3>`);
    parts.push(
      figure(
        await vegaLiteToSvg(forestSpec(categoryRows, { xTitle: 'Δ (judge points)', rules: [0] })),
        'All probe categories of the run (not only the primary battery).',
      ),
    );
  }

  // Reference arms.
  const refRows = report.drift.flatMap((d) => d.referenceArms.map((r) => ({ ...r, target: d.target, judge: d.judge })));
  if (refRows.length > 0) {
    parts.push(
      html`<h3>Reference contexts</h3><p class="note">Δ = filler − arm: real content as a class (shuffled, another session) versus content-free controls.</p>`,
    );
    parts.push(
      table(refRows, [
        { header: 'target', value: (r) => r.target },
        { header: 'judge', value: (r) => r.judge },
        { header: 'arm', value: (r) => r.arm },
        { header: 'Δ [95% CI]', value: (r) => gapText(r.gap), numeric: true },
      ]),
    );
  }

  // Mitigations.
  if (report.mitigations.length > 0) {
    parts.push(html`<h3 id="persona-mitigation">Anchor, placebos and sandwich</h3>`);
    const rows = intervalRows(
      report.mitigations,
      (m) => `${m.mitigation} (${m.distance})`,
      (m) => m.vsControl,
      (m) => `${m.target} · ${m.judge}`,
    );
    if (rows.length > 0) {
      parts.push(
        figure(
          await vegaLiteToSvg(forestSpec(rows, { xTitle: 'arm − control (judge points)', rules: [0] })),
          'Score change over the unmitigated real-context control, 95% position-clustered CI.',
        ),
      );
    }
    parts.push(
      table(report.mitigations, [
        { header: 'target', value: (m) => m.target },
        { header: 'arm', value: (m) => m.mitigation },
        { header: 'distance', value: (m) => m.distance },
        { header: 'mean', value: (m) => f3(m.mean), numeric: true },
        { header: 'n', value: (m) => m.n, numeric: true },
        { header: 'arm − control', value: (m) => gapText(m.vsControl), numeric: true },
        { header: 'arm − placebo', value: (m) => (m.vsPlacebo ? gapText(m.vsPlacebo) : '—'), numeric: true },
        { header: 'recovery', value: (m) => (m.recovery === null ? '—' : pct(m.recovery)), numeric: true },
      ]),
    );
  }

  // Stressors and contracts.
  if (report.stressors.length > 0) {
    parts.push(html`<h3>Stressor compliance and verbosity (judge-free)</h3>`);
    parts.push(
      figure(
        await vegaLiteToSvg(
          barSpec(
            report.stressors.map((s) => ({ label: `${s.item} · ${shortLabel(s.target, 24)}`, group: `${s.arm}/${s.mitigation}`, value: s.complianceRate })),
            { yTitle: 'compliance', percent: true },
          ),
        ),
        'Share of responses passing the deterministic checker (S2: one line, no fence, no preamble).',
      ),
    );
    parts.push(
      table(report.verbosity, [
        { header: 'target', value: (v) => v.target },
        { header: 'stressor', value: (v) => v.item },
        { header: 'pairs', value: (v) => v.pairs, numeric: true },
        { header: 'compliance gap (pp)', value: (v) => f2(v.complianceGapPp), numeric: true },
        { header: 'median verbosity ratio', value: (v) => (v.medianRatio === null ? 'n/a' : `${v.medianRatio.toFixed(2)}×`), numeric: true },
        {
          header: 'ratio when both comply',
          value: (v) => (v.conditionalRatio === null ? 'n/a' : `${v.conditionalRatio.toFixed(2)}× (n=${v.conditionalPairs})`),
          numeric: true,
        },
        {
          header: 'between-session share',
          value: (v) => (v.heterogeneity === null ? '—' : 'error' in v.heterogeneity ? 'n/a' : pct(v.heterogeneity.betweenShare)),
          numeric: true,
        },
      ]),
    );
  }
  if (report.contracts.length > 0) {
    parts.push(html`<h3>Hardened output contracts</h3>`);
    parts.push(html`<details><summary>Pass rate per contract, arm and distance (${report.contracts.length} rows)</summary>`);
    parts.push(
      table(report.contracts, [
        { header: 'target', value: (c) => c.target },
        { header: 'contract', value: (c) => c.item },
        { header: 'arm', value: (c) => `${c.arm}/${c.mitigation}` },
        { header: 'distance', value: (c) => c.distance },
        { header: 'n', value: (c) => c.n, numeric: true },
        { header: 'pass', value: (c) => pct(c.passRate), numeric: true },
        {
          header: 'failures',
          value: (c) =>
            Object.entries(c.failures)
              .map(([k, v]) => `${k}: ${v}`)
              .join(', ') || '—',
        },
      ]),
    );
    parts.push(html`</details>`);
    parts.push(
      table(report.contractContrasts, [
        { header: 'target', value: (c) => c.target },
        { header: 'contrast', value: (c) => c.contrast },
        { header: 'distance', value: (c) => c.distance },
        { header: 'sessions', value: (c) => c.sessions, numeric: true },
        {
          header: 'difference [95% CI]',
          value: (c) =>
            'error' in c.difference
              ? `n/a (${c.difference.error})`
              : `${f2(100 * c.difference.estimate)} pp [${f2(100 * claimInterval(c.difference)[0])}, ${f2(100 * claimInterval(c.difference)[1])}]${confidenceNote(c.difference.claim)}`,
          numeric: true,
        },
        { header: 'Holm p', value: (c) => ('error' in c.difference ? 'n/a' : pv(claimP(c.difference))), numeric: true },
      ]),
    );
  }

  // Compaction.
  if (report.compaction.length > 0) {
    parts.push(html`<h3>Compaction</h3>`);
    parts.push(
      table(report.compaction, [
        { header: 'target', value: (c) => c.target },
        { header: 'judge', value: (c) => c.judge },
        { header: 'events', value: (c) => c.events.length, numeric: true },
        { header: 'mean post − pre', value: (c) => (c.meanChange === null ? 'n/a' : f2(c.meanChange)), numeric: true },
        {
          header: `TOST ±${report.options.tostMargin}`,
          value: (c) =>
            c.tost === null
              ? '—'
              : 'error' in c.tost
                ? `n/a (${c.tost.error})`
                : `p = ${pv(c.tost.p)}; ${c.tost.equivalent ? 'equivalent' : 'not shown equivalent'}`,
        },
      ]),
    );
  }

  // Fingerprint.
  if (report.fingerprint && !('error' in report.fingerprint)) {
    const fp = report.fingerprint;
    const fpTargets = new Set(fp.points.map((p) => p.target));
    parts.push(html`<h3>Behavioural fingerprint (judge-free)</h3>`);
    parts.push(
      figure(
        await vegaLiteToSvg(
          scatterSpec(
            fp.points.map((p) => ({ x: p.pc1, y: p.pc2, group: `${p.arm}/${p.mitigation}`, ...(fpTargets.size > 1 && p.target ? { shape: p.target } : {}) })),
            fp.centroids.map((c) => ({
              x: c.pc1,
              y: c.pc2,
              group: `${c.arm}/${c.mitigation}`,
              tip: `centroid of ${c.arm}/${c.mitigation} (${c.n} responses): PC1 ${f3(c.pc1)}, PC2 ${f3(c.pc2)}`,
            })),
            {
              xTitle: `PC1 (${pct(fp.explainedVarianceRatio[0])})`,
              yTitle: `PC2 (${pct(fp.explainedVarianceRatio[1])})`,
              groupTitle: 'arm/mitigation',
              ...(fpTargets.size > 1 ? { shapeTitle: 'target' } : {}),
            },
          ),
        ),
        'Six features per response (hedge and experiential density, committed preference, em-dashes, paragraph breaks, log length), z-scored, first two principal components; colour = arm/mitigation (shape = target when there are several); outlined diamonds are arm centroids. PC1 is oriented so the real arm is positive.',
      ),
    );
  }

  // Cross-judge agreement.
  if (report.judgeAgreement.length > 0) {
    parts.push(html`<h3>Cross-judge agreement</h3>`);
    parts.push(
      table(report.judgeAgreement, [
        { header: 'judges', value: (a) => `${a.judgeA} vs ${a.judgeB}` },
        { header: 'pairs', value: (a) => ('error' in a.pairs ? 'n/a' : a.pairs.n), numeric: true },
        { header: 'exact', value: (a) => ('error' in a.pairs ? 'n/a' : pct(a.pairs.exact)), numeric: true },
        { header: 'within one', value: (a) => ('error' in a.pairs ? 'n/a' : pct(a.pairs.withinOne)), numeric: true },
        { header: 'κ', value: (a) => ('error' in a.pairs ? 'n/a' : f3(a.pairs.kappa)), numeric: true },
        { header: 'κ quadratic', value: (a) => ('error' in a.pairs ? 'n/a' : f3(a.pairs.kappaQuadratic)), numeric: true },
        {
          header: 'sign agree / flip / null-vs-small',
          value: (a) => ('error' in a.signs ? 'n/a' : `${a.signs.agree} / ${a.signs.flip} / ${a.signs.nullVsSmall}`),
        },
      ]),
    );
  }

  // Counts.
  const done = report.counts.byArm.reduce((n, a) => n + a.done, 0);
  const empty = report.counts.byArm.reduce((n, a) => n + a.empty, 0);
  const failed = report.counts.byArm.reduce((n, a) => n + a.failed, 0);
  const invalid = report.counts.invalidJudgements.reduce((n, j) => n + j.invalid, 0);
  const judged = report.counts.invalidJudgements.reduce((n, j) => n + j.judged, 0);
  parts.push(html`<h3 id="persona-counts">Cells, dropouts and invalid judgements</h3>`);
  parts.push(
    html`<details><summary>${done} done, ${empty} empty (dropout), ${failed} failed target cells; ${invalid} of ${judged} judgements invalid (excluded) — per arm</summary>`,
  );
  parts.push(
    table(report.counts.byArm, [
      { header: 'target', value: (a) => a.target },
      { header: 'arm', value: (a) => `${a.arm}/${a.mitigation}` },
      { header: 'surface', value: (a) => a.surface },
      { header: 'done', value: (a) => a.done, numeric: true },
      { header: 'empty (dropout)', value: (a) => a.empty, numeric: true },
      { header: 'failed', value: (a) => a.failed, numeric: true },
      { header: 'dropout rate', value: (a) => pct(a.dropoutRate), numeric: true },
    ]),
  );
  parts.push(
    table(report.counts.invalidJudgements, [
      { header: 'judge', value: (j) => j.judge },
      { header: 'arm', value: (j) => `${j.arm}/${j.mitigation}` },
      { header: 'judged', value: (j) => j.judged, numeric: true },
      { header: 'invalid (excluded)', value: (j) => j.invalid, numeric: true },
    ]),
  );
  parts.push(html`</details>`);

  // Side-by-side examples: same target, session, position, probe and sample in both arms.
  parts.push(
    html`<h3>Side-by-side responses</h3><p class="note">The same probe at the same position, real-session context (left) and filler context (right). Responses are untrusted model output, shown as text.</p>`,
  );
  parts.push(...examplePairs(observations, 2));
  return html`${parts}`;
}

function examplePairs(observations: readonly PersonaObservation[], limit: number): RawHtml[] {
  const key = (o: PersonaObservation) => [o.target, o.session, o.position, o.item, o.paraphrase, o.sample, o.mitigation].join('\u0000');
  const perTarget = new Map<string, number>();
  const filler = new Map(observations.filter((o) => o.arm === 'filler' && o.surface === 'probe' && o.status === 'done').map((o) => [key(o), o]));
  const pairs = observations
    .filter((o) => o.arm === 'real' && o.mitigation === 'none' && o.surface === 'probe' && o.status === 'done' && filler.has(key(o)))
    .map((o) => ({ real: o, filler: filler.get(key(o)) as PersonaObservation }))
    .map((p) => ({ ...p, diff: scoreOf(p.filler) - scoreOf(p.real) }))
    .sort((a, b) => b.diff - a.diff || key(a.real).localeCompare(key(b.real)))
    // The most divergent pairs, at most `limit` per target so every target is shown.
    .filter((p) => {
      const shown = perTarget.get(p.real.target) ?? 0;
      perTarget.set(p.real.target, shown + 1);
      return shown < limit;
    });
  if (pairs.length === 0) return [html`<p class="muted">No paired responses in this run.</p>`];
  return pairs.map(
    (
      p,
    ) => html`<div><span class="tag">${p.real.target}</span><span class="tag">${p.real.session} ${p.real.position}</span><span class="tag">${p.real.item}</span>
<div class="pair"><div class="response"><strong>real</strong> · score ${fmtScores(p.real)}<pre>${p.real.text}</pre></div><div class="response"><strong>filler</strong> · score ${fmtScores(p.filler)}<pre>${p.filler.text}</pre></div></div></div>`,
  );
}

function scoreOf(o: PersonaObservation): number {
  const values = Object.values(o.scores).filter((s): s is number => typeof s === 'number');
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

function fmtScores(o: PersonaObservation): string {
  const entries = Object.entries(o.scores);
  return entries.length === 0 ? 'n/a' : entries.map(([judge, s]) => `${s === null ? 'invalid' : s} (${judge})`).join(', ');
}
