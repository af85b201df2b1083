import type { AuditHeadlineTarget } from '../experiment/audit.js';
import { barSpec, forestSpec, type IntervalRow, scatterSpec, shortLabel, trajectorySpec } from '../report/charts.js';
import { captioned, int, intervalCell, num, para, pCell, table, text } from '../report/document/cells.js';
import { documentMarkdown } from '../report/document/render-markdown.js';
import type { AuditDocumentPart, DocumentBlock, DocumentCell, DocumentSection, DocumentVerdict } from '../report/document/types.js';
import { fixed as f3, pClause, pValue as pv, share as pct, signed as f2 } from '../report/format.js';
import type { Estimate, GapEstimate, Maybe, PersonaObservation, PersonaReport, VerdictKind } from './analysis.js';
import { extrasSections } from './extras-render.js';
import { familyText, procedureText, referenceComparison, SAME_IN_BOTH, VERDICT_NOTE } from './reference-render.js';
import { describePersonaUnits } from './units.js';
import { claimInterval, claimP, confidenceLabel, confidenceNote } from './claim-text.js';
import type { UnitInference } from './inference.js';

/**
 * The persona-drift (ContextEcho) result document (pure): verdicts, and the report's sections as
 * data — tables of typed cells, the forest, trajectory, bar and fingerprint charts, notes and
 * side-by-side responses. The shared renderers (report/document/) draw it as HTML and Markdown.
 */

export interface PersonaSessionInfo {
  id: string;
  file?: string;
  compactions?: number[];
  /** The goal chosen for goal re-injection (run manifest). */
  goal?: { text: string; messageIndex: number; source: string } | null;
  /** Positions whose context follows a compaction whose summary is absent (Codex remote compaction). */
  missingSummaries?: Array<{ position: string; compaction: number; note: string }>;
}

const isGap = <T extends Estimate>(g: Maybe<T>): g is T => !('error' in g);
/** An estimate with its interval (its claim's where it has one), or why there is none. */
const gapCell = (g: Maybe<Estimate | UnitInference>, digits = 2): DocumentCell => {
  if (!isGap(g)) return text(`n/a (${g.error})`);
  return 'claim' in g
    ? intervalCell(g.estimate, claimInterval(g), 'signed', digits, confidenceNote(g.claim))
    : intervalCell(g.estimate, g.ci, 'signed', digits);
};
/** A difference of rates in percentage points with its claim's interval; `withLevel` names the unit of inference. */
const ppCell = (d: Maybe<GapEstimate>, withLevel = false): DocumentCell => {
  if (!isGap(d)) return text(`n/a (${d.error})`);
  const [lo, hi] = claimInterval(d);
  return intervalCell(100 * d.estimate, [100 * lo, 100 * hi], 'signed', 2, `${withLevel ? ` pp (${d.level}s)` : ' pp'}${confidenceNote(d.claim)}`);
};
/** The deciding p of a claim (Holm-adjusted in a family), n/a where the test was refused. */
const claimPCell = (test: Maybe<UnitInference>): DocumentCell => ('error' in test ? text('n/a') : pCell(claimP(test)));
const holm = (p: number | null | undefined): DocumentCell => (p === null || p === undefined ? text('n/a') : pCell(p));
const unitsOf = (r: Maybe<{ units: number; level: string }>) => text('error' in r ? 'n/a' : `${r.units} ${r.level}s`);
const ratio = (x: number | null, suffix = '') => (x === null ? text('n/a') : text(`${x.toFixed(2)}×${suffix}`));
/** Plain text cells, one per value. */
const texts = (...values: string[]): DocumentCell[] => values.map((v) => text(v));
/** A section holding one table of `items`, or none when there are no items. */
const tableSection = <T>(title: string, items: readonly T[], header: string[], row: (item: T) => DocumentCell[], numeric?: number[]): DocumentSection[] =>
  items.length === 0 ? [] : [{ title, blocks: [table(header, items.map(row), numeric)] }];

function intervalRows<T>(items: readonly T[], label: (t: T) => string, gap: (t: T) => Maybe<GapEstimate>, group?: (t: T) => string): IntervalRow[] {
  return items.flatMap((item) => {
    const g = gap(item);
    return isGap(g)
      ? [{ label: label(item), estimate: g.estimate, lo: claimInterval(g)[0], hi: claimInterval(g)[1], ...(group ? { group: group(item) } : {}) }]
      : [];
  });
}

/** A forest chart of interval rows with its caption, or nothing when no row has an interval. */
const forestBlock = (rows: IntervalRow[], xTitle: string, rules: number[], caption: string): DocumentBlock[] =>
  rows.length > 0 ? [{ kind: 'chart', spec: forestSpec(rows, { xTitle, rules }), caption }] : [];

const TONE: Record<VerdictKind, AuditHeadlineTarget['tone']> = {
  drift: 'alert',
  'no detectable drift': 'ok',
  'underpowered for this design': 'neutral',
  'not computable': 'neutral',
};

/**
 * The first screen of a persona run: per target and judge, the verdict, the position-averaged gap Δ
 * with its CI, its sign-flip test, the two arm means and the onset — every number read from
 * `report.drift`, as in the JSON. A fragile verdict (one session carries it) says so in the verdict
 * itself, as the gate does.
 */
export function personaVerdicts(report: PersonaReport): DocumentVerdict[] {
  return report.drift.map((d): DocumentVerdict => {
    const g = d.gap;
    const numbers: DocumentVerdict['numbers'] = [
      {
        label: isGap(g) && g.claim.family > 1 ? `drift gap Δ [${confidenceLabel(g.claim)} CI]` : 'drift gap Δ [95% CI]',
        value: isGap(g) ? `${f2(g.estimate)} [${f2(claimInterval(g)[0])}, ${f2(claimInterval(g)[1])}]` : `n/a (${g.error})`,
        ...(isGap(g) ? { detail: `filler − real, judge points (0–3), over ${g.units} ${g.level}s${d.strongDrift ? '; strong drift' : ''}` } : {}),
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
      numbers,
    };
  });
}

function verdictSection(report: PersonaReport): DocumentSection {
  const blocks: DocumentBlock[] =
    report.verdicts.length === 0
      ? [{ kind: 'text', text: 'No judged probe cells: no drift verdict.' }]
      : [{ kind: 'list', items: report.verdicts.map((v) => [{ strong: v.target }, ` (judge ${v.judge}) — ${v.text}. Cell: ${v.cell}.`]) }];
  blocks.push(
    para([
      `Drift gap Δ = mean judge score on the filler arm − on the real-session arm (0–3 scale; positive = drift) in the headline cell (${report.design.headline}). Inference is at the sampled unit: positions when the run has one session, sessions when it has several (positions averaged within their session); a sign-flip test of the unit means (exact up to 20 units) and its inverted 95% interval, which excludes 0 exactly when p < 0.05 (t interval widened to 0 when the test cannot reach 0.05), Holm across targets; a significant session-level verdict that rests on one outlying session (it fails without that session, whose deleted residual is beyond the Bonferroni t bound) is marked fragile. With several sessions the test assumes their gaps are symmetric about the mean: when a rare session carries the drift it is not, and no test over a few sessions can tell ('persona calibrate --session-effects dominant' shows the cost for a design). Strong drift: |Δ| ≥ ${report.options.strongThreshold}. Probe battery: ${report.options.primaryCategory ?? 'all categories'}. Check what this design can detect before a run with `,
      { code: 'echolens persona calibrate <config>' },
      '.',
    ]),
  );
  const units = describePersonaUnits(report.units);
  if (units.length > 0) blocks.push({ kind: 'text', text: 'Units of inference:' }, { kind: 'list', items: units });
  return { id: 'persona-verdicts', title: 'Verdict per target', blocks };
}

function driftSection(report: PersonaReport): DocumentSection {
  const threshold = report.options.strongThreshold;
  const forest = intervalRows(
    report.drift,
    (d) => `${d.target} · ${d.judge}`,
    (d) => d.gap,
  );
  return {
    id: 'persona-forest',
    title: 'Drift per target',
    blocks: [
      ...forestBlock(
        forest,
        'Δ = filler − real (judge points)',
        [0, -threshold, threshold],
        `Point = Δ, bar = the interval that agrees with the deciding p at the sampled unit (95%, or Holm-consistent across targets); dashed lines at 0 and ±${threshold}.`,
      ),
      table(
        ['target', 'judge', 'Δ [95% CI]', 'real', 'filler', 'units', 'strong', 'p (Holm across targets)', 'onset'],
        report.drift.map((d) => [
          ...texts(d.target, d.judge),
          gapCell(d.gap),
          isGap(d.gap) ? num(d.gap.real.estimate, 'fixed') : text('n/a'),
          isGap(d.gap) ? num(d.gap.filler.estimate, 'fixed') : text('n/a'),
          text(!isGap(d.gap) ? 'n/a' : d.gap.level === 'session' ? `${d.gap.units} sessions (${d.gap.positions} positions)` : `${d.gap.units} positions`),
          text(d.strongDrift ? 'yes' : 'no', { mark: d.strongDrift }),
          claimPCell(d.gap),
          text(d.onset ? `${d.onset.position} (${d.onset.positionValue})` : '—'),
        ]),
        [2, 3, 4, 7],
      ),
    ],
  };
}

/** The calibrated content-position contrasts, with the Holm family of each adjusted p. */
function contentPositionSection(report: PersonaReport): DocumentSection[] {
  const rows = report.contentPosition ?? [];
  if (rows.length === 0) return [];
  return [
    {
      title: 'Content-position contrasts (calibrated)',
      blocks: [
        para([
          'Each content condition against scratch at the positions scratch was measured, probes as units (all categories). ',
          { code: 'p (Holm, panel)' },
          " is adjusted across every target × condition of the judge (the paper's panel-wide family); ",
          { code: 'p (Holm within target)' },
          " across the target's conditions.",
        ]),
        table(
          ['target', 'judge', 'contrast', 'Δ [95% CI]', 'p', 'p (Holm, panel)', 'p (Holm within target)'],
          rows.map((r) => {
            const d = r.difference;
            if (!isGap(d)) return texts(r.target, r.judge, r.contrast, `n/a (${d.error})`, '', '', '');
            return [
              ...texts(r.target, r.judge, r.contrast),
              gapCell(d),
              pCell(d.p),
              r.pHolm === null ? text('n/a') : pCell(r.pHolm, ` (of ${r.familySize})`),
              holm(r.pHolmWithinTarget),
            ];
          }),
        ),
      ],
    },
  ];
}

/** The paper's procedure beside the calibrated one (runs with a `reference` block). */
function referenceSection(report: PersonaReport): DocumentSection[] {
  const reference = report.reference;
  if (!reference) return [];
  const iv = (estimate: number, ci: readonly [number, number], format: 'signed' | 'fixed' = 'signed', suffix?: string) =>
    intervalCell(estimate, ci, format, format === 'signed' ? 2 : 3, suffix);
  const blocks: DocumentBlock[] = [
    { kind: 'text', text: VERDICT_NOTE },
    { kind: 'text', text: procedureText(reference) },
    {
      kind: 'table',
      columns: [{ header: 'target' }, { header: 'quantity' }, { header: 'calibrated (verdict)', numeric: true }, { header: 'paper', numeric: true }],
      rows: referenceComparison(report, reference).map((r) => [text(r.target), text(r.quantity), text(r.calibrated), text(r.paper)]),
      empty: 'No cell both procedures can estimate.',
    },
  ];
  const other = reference.permutation.filter((p) => p.contrast !== 'filler - real');
  const moreArms = reference.arms.filter((a) => a.arm !== 'real' && a.arm !== 'filler');
  blocks.push(
    ...captioned(
      other.length > 0,
      'Paired permutation against scratch (paper):',
      ['target', 'contrast', 'mean', 'p', 'p (Holm, family)', 'p (Holm within target)'],
      other.map((p) => [text(p.target), text(p.contrast), num(p.mean, 'signed'), pCell(p.p), pCell(p.pHolm, ` (${familyText(p)})`), holm(p.pHolmWithinTarget)]),
      [2, 3, 4, 5],
    ),
    ...captioned(
      reference.byCategory.length > 0,
      'Δ per probe category (paper: each arm over its own positions):',
      ['target', 'category', 'real', 'filler', 'Δ', 'positions (real / filler)'],
      [
        ...reference.byCategory.map((c) => [
          ...texts(c.target, c.category),
          num(c.real, 'fixed'),
          num(c.filler, 'fixed'),
          num(c.estimate, 'signed'),
          text(`${c.positions.real} / ${c.positions.filler}`),
        ]),
        ...reference.categoryPanel.map((c) => [...texts(`drifters (${c.drifters.length})`, c.category, '', ''), num(c.estimate, 'signed'), text('')]),
      ],
      [2, 3, 4],
    ),
    ...captioned(
      reference.trajectory.length > 0,
      'Trajectory, all probes (paper):',
      ['target', 'position', 'real [95% CI]', 'filler [95% CI]'],
      reference.trajectory.flatMap((t) => [
        ...t.positions.map((p) => [text(t.target), text(p.position), iv(p.real.mean, p.real.ci, 'fixed'), iv(p.filler.mean, p.filler.ci, 'fixed')]),
        [text(t.target), text('mean of positions'), num(t.real, 'fixed'), num(t.filler, 'fixed', 3, ` (Δ ${f2(t.gap)})`)],
      ]),
      [2, 3],
    ),
    ...captioned(
      moreArms.length > 0,
      'Other arms, mean of position means (paper):',
      ['target', 'arm', 'mean [95% CI]', 'positions', 'n'],
      moreArms.map((a) => [text(a.target), text(a.arm), iv(a.mean, a.ci, 'fixed'), int(a.positions), int(a.n)]),
      [2, 3, 4],
    ),
    ...captioned(
      reference.compliance.length > 0,
      'S2 compliance audit (paper; pairs of real and filler at the same position and paraphrase):',
      ['target / session', 'pairs', 'real pass', 'filler pass', 'gap (pp)', 'length ratio (all)', 'length ratio (both comply)'],
      reference.compliance.map((c) => [
        text(c.target === null ? `session ${c.session}, all targets` : c.target),
        int(c.pairs),
        int(c.real.pass),
        int(c.filler.pass),
        num(c.gapPp, 'signed'),
        ratio(c.rawRatio, ` (${c.rawPairs})`),
        ratio(c.conditionalRatio, ` (${c.conditionalPairs})`),
      ]),
      [1, 2, 3, 4, 5, 6],
    ),
    ...captioned(
      reference.anchorVariants.length > 0,
      'Anchor variants (paper; verbosity ratio against filler without and with the anchor, attenuation):',
      ['variant', 'target', 'position', 'ratio, no anchor', 'ratio, anchor', 'attenuation'],
      [
        ...reference.anchorVariants.map((a) => [
          ...texts(a.variant, a.target, a.position),
          ratio(a.ratioNoAnchor),
          ratio(a.ratioWithAnchor),
          text(`${a.attenuationPct.toFixed(1)}%`),
        ]),
        ...reference.anchorVariantSummary.map((v) =>
          texts(v.variant, `all (${v.cells} cells)`, '', '', '', `mean ${v.meanAttenuationPct.toFixed(1)}%, ≥ 50 %: ${v.wins}, < 0 %: ${v.failures}`),
        ),
      ],
      [3, 4, 5],
    ),
  );
  if (reference.notComputed.length > 0)
    blocks.push({ kind: 'list', items: reference.notComputed.map((n) => `not computed (paper): ${n.target} ${n.what}: ${n.error}`) });
  blocks.push({ kind: 'text', text: 'Computed the same way in both procedures (tables above):' }, { kind: 'list', items: SAME_IN_BOTH });
  return [{ id: 'persona-reference', title: "The paper's procedure beside the calibrated one", blocks }];
}

/** The further analyses (consensus, harness, framing, onset, anchor ablation): their rows as text cells, their charts as data. */
function extrasDocumentSections(report: PersonaReport): DocumentSection[] {
  return extrasSections(report).map((s) => ({
    id: s.id,
    title: s.title,
    blocks: [
      { kind: 'text', text: s.note },
      ...(s.chart ? forestBlock(s.chart.rows, 'Δ = filler − real (judge points)', [0], s.chart.caption) : []),
      ...(s.specs ?? []).map((c) => ({ kind: 'chart' as const, spec: c.spec, caption: c.caption })),
      table(
        s.header,
        s.rows.map((r) => texts(...r)),
      ),
    ],
  }));
}

/** Per session: the re-injected goal, and every position whose context lacks a compaction summary. */
function sessionNotes(sessions: readonly PersonaSessionInfo[]): DocumentBlock[] {
  return sessions.flatMap((s): DocumentBlock[] => [
    ...((s.missingSummaries ?? []).length > 0
      ? [
          para(
            `Session ${s.id}: ${(s.missingSummaries ?? []).length} position(s) follow a Codex remote compaction whose summary is encrypted, so their real context lacks it (${(s.missingSummaries ?? []).map((m) => `${m.position}: C${m.compaction}`).join(', ')}).`,
          ),
        ]
      : []),
    ...(s.goal
      ? [{ kind: 'text' as const, text: `Session ${s.id}: goal for re-injection from message ${s.goal.messageIndex} (${s.goal.source}): “${s.goal.text}”.` }]
      : []),
  ]);
}

/** Per target and judge: Δ by session, over positions, by probe category and against reference contexts; the trajectory charts. */
function driftDetailSection(report: PersonaReport, sessions: readonly PersonaSessionInfo[]): DocumentSection {
  const blocks: DocumentBlock[] = [];
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
    blocks.push({
      kind: 'chart',
      title: `Drift trajectory — session ${session}${info?.file ? ` (${info.file})` : ''}`,
      spec: trajectorySpec(
        rows,
        (info?.compactions ?? []).map((x, i) => ({ x, label: `C${i + 1}` })),
        { xTitle: 'position (agent steps)', yTitle: 'Δ (judge points)' },
      ),
      caption: 'Δ per snapshot position with its 95% interval over probes; red dashed lines mark context compactions.',
    });
  }
  blocks.push(...sessionNotes(sessions));
  const categoryRows = report.drift.flatMap((d) =>
    intervalRows(
      d.byCategory,
      (c) => c.category,
      (c) => c.gap,
      () => `${d.target} · ${d.judge}`,
    ),
  );
  if (categoryRows.length > 0)
    blocks.push({
      kind: 'chart',
      title: 'Drift by probe category',
      spec: forestSpec(categoryRows, { xTitle: 'Δ (judge points)', rules: [0] }),
      caption: 'All probe categories of the run (not only the primary battery).',
    });
  for (const d of report.drift) {
    blocks.push({ kind: 'heading', text: `${d.target} — judge ${d.judge}` }, { kind: 'text', text: `Cell: ${d.cell}.` });
    if (isGap(d.gap) && d.gap.note) blocks.push({ kind: 'text', text: `Note: ${d.gap.note}.` });
    blocks.push(
      ...captioned(
        true,
        'By session (its positions are the units):',
        ['session', 'Δ [95% CI]'],
        d.bySession.map((x) => [text(x.session), gapCell(x.gap)]),
        [1],
      ),
      ...captioned(
        true,
        'Trajectory over positions (probes are the units):',
        ['session', 'position', 'counter', 'Δ [95% CI]'],
        d.byPosition.map((p) => [text(p.session), text(p.position), int(p.positionValue), gapCell(p.gap)]),
        [2, 3],
      ),
      ...captioned(
        true,
        'By probe category:',
        ['category', 'Δ [95% CI]'],
        d.byCategory.map((c) => [text(c.category), gapCell(c.gap)]),
        [1],
      ),
      ...captioned(
        d.referenceArms.length > 0,
        'Reference contexts (Δ = filler − arm: real content as a class versus content-free controls):',
        ['arm', 'Δ [95% CI]'],
        d.referenceArms.map((r) => [text(r.arm), gapCell(r.gap)]),
        [1],
      ),
    );
  }
  return { title: 'Drift by session, position and probe category', blocks };
}

function designSections(report: PersonaReport): DocumentSection[] {
  return [
    ...tableSection('Continuations replayed after each position', report.design.continuations, ['session', 'position', 'continuation'], (c) =>
      texts(c.session, c.position, c.text),
    ),
    ...tableSection(
      'Other cells of the design',
      report.contrasts,
      ['kind', 'contrast', 'estimate [95% CI]', 'units', 'sign-flip p'],
      (c) => [text(c.kind), text(c.name), gapCell(c.result), unitsOf(c.result), claimPCell(c.result)],
      [2, 4],
    ),
    ...tableSection(
      'Scratch arm (no context; analysed once per target)',
      report.scratch,
      ['target', 'judge', 'prompt', 'distinct answers', 'mean [95% CI over probes]'],
      (x) => [
        ...texts(x.target, x.judge, x.systemPrompt),
        int(x.answers),
        isGap(x.mean) ? intervalCell(x.mean.estimate, x.mean.ci, 'fixed') : text(`n/a (${x.mean.error})`),
      ],
      [3, 4],
    ),
  ];
}

function mitigationSection(report: PersonaReport): DocumentSection[] {
  if (report.mitigations.length === 0) return [];
  const rows = intervalRows(
    report.mitigations,
    (m) => `${m.mitigation} (${m.distance})`,
    (m) => m.vsControl,
    (m) => `${m.target} · ${m.judge}`,
  );
  return [
    {
      id: 'persona-mitigation',
      title: 'Mitigations: anchor, placebos and sandwich (probe surface, real context)',
      blocks: [
        ...forestBlock(rows, 'arm − control (judge points)', [0], 'Score change over the unmitigated real-context control, 95% position-clustered CI.'),
        table(
          ['target', 'judge', 'arm', 'prompt', 'distance', 'mean', 'n', 'arm − control [95% CI]', 'Holm p', 'arm − placebo [95% CI]', 'recovery'],
          report.mitigations.map((m) => [
            ...texts(m.target, m.judge, m.mitigation, m.systemPrompt, m.distance),
            num(m.mean, 'fixed'),
            int(m.n),
            gapCell(m.vsControl),
            claimPCell(m.vsControl),
            m.vsPlacebo ? gapCell(m.vsPlacebo) : text('—'),
            num(m.recovery, 'share'),
          ]),
          [5, 6, 7, 8, 9, 10],
        ),
      ],
    },
  ];
}

function stressorSections(report: PersonaReport): DocumentSection[] {
  const out: DocumentSection[] = [];
  if (report.stressors.length > 0)
    out.push({
      title: 'Stressors: compliance and verbosity (judge-free)',
      blocks: [
        {
          kind: 'chart',
          spec: barSpec(
            report.stressors.map((s) => ({ label: `${s.item} · ${shortLabel(s.target, 24)}`, group: `${s.arm}/${s.mitigation}`, value: s.complianceRate })),
            { yTitle: 'compliance', percent: true },
          ),
          caption: 'Share of responses passing the deterministic checker (S2: one line, no fence, no preamble).',
        },
        table(
          ['target', 'stressor', 'arm', 'mitigation', 'n', 'compliance', 'mean length'],
          report.stressors.map((s) => [
            ...texts(s.target, s.item, s.arm, s.mitigation),
            int(s.n),
            num(s.complianceRate, 'share'),
            num(s.meanLength, 'fixed', 0),
          ]),
          [4, 5, 6],
        ),
        table(
          ['target', 'stressor', 'pairs', 'compliance gap (pp)', 'median verbosity ratio', 'ratio when both comply', 'between-session share'],
          report.verbosity.map((v) => [
            ...texts(v.target, v.item),
            int(v.pairs),
            num(v.complianceGapPp, 'signed'),
            ratio(v.medianRatio),
            ratio(v.conditionalRatio, ` (n=${v.conditionalPairs})`),
            v.heterogeneity === null
              ? text('—')
              : 'error' in v.heterogeneity
                ? text(`n/a (${v.heterogeneity.error})`)
                : num(v.heterogeneity.betweenShare, 'share'),
          ]),
          [2, 3, 4, 5, 6],
        ),
        table(
          ['target', 'stressor', 'prompt', 'filler − real compliance [95% CI]', 'units', 'Holm p'],
          report.stressorContrasts.map((c) => [
            ...texts(c.target, c.item, c.systemPrompt),
            ppCell(c.difference),
            unitsOf(c.difference),
            claimPCell(c.difference),
          ]),
          [3, 5],
        ),
      ],
    });
  if (report.contracts.length > 0)
    out.push({
      title: 'Hardened contracts (deterministic parsers)',
      blocks: [
        table(
          ['target', 'contract', 'arm', 'mitigation', 'distance', 'n', 'pass', 'failures'],
          report.contracts.map((c) => [
            ...texts(c.target, c.item, c.arm, c.mitigation, c.distance),
            int(c.n),
            num(c.passRate, 'share'),
            text(
              Object.entries(c.failures)
                .map(([k, v]) => `${k}: ${v}`)
                .join(', ') || '—',
            ),
          ]),
          [5, 6],
        ),
        table(
          ['target', 'contract', 'contrast', 'prompt', 'distance', 'sessions', 'difference [95% CI]', 'Holm p'],
          report.contractContrasts.map((c) => [
            ...texts(c.target, c.item, c.contrast, c.systemPrompt, c.distance),
            int(c.sessions),
            ppCell(c.difference, true),
            claimPCell(c.difference),
          ]),
          [5, 6, 7],
        ),
      ],
    });
  return out;
}

function judgeSections(report: PersonaReport): DocumentSection[] {
  const out: DocumentSection[] = [
    ...tableSection(
      'Compaction (post − pre change in Δ)',
      report.compaction,
      ['target', 'judge', 'events', 'mean change', `TOST (±${report.options.tostMargin})`],
      (c) => [
        ...texts(c.target, c.judge),
        int(c.events.length),
        num(c.meanChange, 'signed'),
        text(
          c.tost === null
            ? '—'
            : 'error' in c.tost
              ? `n/a (${c.tost.error})`
              : `${pClause(c.tost.p)}, 90% CI [${f2(c.tost.ci[0])}, ${f2(c.tost.ci[1])}], ${c.tost.equivalent ? 'equivalent' : 'not shown equivalent'}`,
        ),
      ],
      [2, 3],
    ),
    ...tableSection(
      'Cross-judge agreement',
      report.judgeAgreement,
      ['judges', 'pairs', 'exact', 'within one', 'κ', 'κ (quadratic)', 'sign agree / flip / null-vs-small'],
      (a) => {
        const p = 'error' in a.pairs ? null : a.pairs;
        return [
          text(`${a.judgeA} vs ${a.judgeB}`),
          ...(p
            ? [int(p.n), num(p.exact, 'share'), num(p.withinOne, 'share'), num(p.kappa, 'fixed'), num(p.kappaQuadratic, 'fixed')]
            : texts(...Array(5).fill('n/a'))),
          text('error' in a.signs ? 'n/a' : `${a.signs.agree} / ${a.signs.flip} / ${a.signs.nullVsSmall}`),
        ];
      },
      [1, 2, 3, 4, 5],
    ),
  ];
  const fp = report.fingerprint;
  if (fp && !('error' in fp)) {
    const targets = new Set(fp.points.map((p) => p.target));
    out.push({
      title: 'Behavioural fingerprint (judge-free, PCA)',
      blocks: [
        para(
          `PC1 explains ${pct(fp.explainedVarianceRatio[0])}, PC2 ${pct(fp.explainedVarianceRatio[1])} of the standardized feature variance; PC1 is oriented so the real arm is positive.`,
        ),
        {
          kind: 'chart',
          spec: scatterSpec(
            fp.points.map((p) => ({ x: p.pc1, y: p.pc2, group: `${p.arm}/${p.mitigation}`, ...(targets.size > 1 && p.target ? { shape: p.target } : {}) })),
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
              ...(targets.size > 1 ? { shapeTitle: 'target' } : {}),
            },
          ),
          caption:
            'Six features per response (hedge and experiential density, committed preference, em-dashes, paragraph breaks, log length), z-scored, first two principal components; colour = arm/mitigation (shape = target when there are several); outlined diamonds are arm centroids. PC1 is oriented so the real arm is positive.',
        },
        table(
          ['arm', 'mitigation', 'n', 'PC1', 'PC2'],
          fp.centroids.map((c) => [text(c.arm), text(c.mitigation), int(c.n), num(c.pc1, 'signed'), num(c.pc2, 'signed')]),
          [2, 3, 4],
        ),
      ],
    });
  }
  return out;
}

function countsSection(report: PersonaReport): DocumentSection {
  const sum = <T>(rows: readonly T[], f: (t: T) => number) => rows.reduce((n, r) => n + f(r), 0);
  const { byArm, invalidJudgements } = report.counts;
  return {
    id: 'persona-counts',
    title: 'Cells, dropouts and invalid judgements',
    blocks: [
      para(
        `${sum(byArm, (a) => a.done)} done, ${sum(byArm, (a) => a.empty)} empty (dropout), ${sum(byArm, (a) => a.failed)} failed target cells; ${sum(invalidJudgements, (j) => j.invalid)} of ${sum(invalidJudgements, (j) => j.judged)} judgements invalid (excluded).`,
      ),
      table(
        ['target', 'arm', 'mitigation', 'surface', 'done', 'empty (dropout)', 'failed', 'dropout rate'],
        byArm.map((a) => [...texts(a.target, a.arm, a.mitigation, a.surface), int(a.done), int(a.empty), int(a.failed), num(a.dropoutRate, 'share')]),
        [4, 5, 6, 7],
      ),
      table(
        ['judge', 'arm', 'mitigation', 'judged', 'invalid (excluded)'],
        invalidJudgements.map((j) => [...texts(j.judge, j.arm, j.mitigation), int(j.judged), int(j.invalid)]),
        [3, 4],
      ),
    ],
  };
}

const scoreOf = (o: PersonaObservation): number => {
  const values = Object.values(o.scores).filter((s): s is number => typeof s === 'number');
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
};
const scoresText = (o: PersonaObservation): string => {
  const entries = Object.entries(o.scores);
  return entries.length === 0 ? 'n/a' : entries.map(([judge, s]) => `${s === null ? 'invalid' : s} (${judge})`).join(', ');
};

/** Side-by-side responses: the most divergent real/filler pairs, at most `limit` per target (model output, shown as text). */
function examplesSection(observations: readonly PersonaObservation[], limit: number): DocumentSection {
  const key = (o: PersonaObservation) => [o.target, o.session, o.position, o.item, o.paraphrase, o.sample, o.mitigation].join('\u0000');
  const perTarget = new Map<string, number>();
  const filler = new Map(observations.filter((o) => o.arm === 'filler' && o.surface === 'probe' && o.status === 'done').map((o) => [key(o), o]));
  const pairs = observations
    .filter((o) => o.arm === 'real' && o.mitigation === 'none' && o.surface === 'probe' && o.status === 'done' && filler.has(key(o)))
    .map((o) => ({ real: o, filler: filler.get(key(o)) as PersonaObservation }))
    .map((p) => ({ ...p, diff: scoreOf(p.filler) - scoreOf(p.real) }))
    .sort((a, b) => b.diff - a.diff || key(a.real).localeCompare(key(b.real)))
    .filter((p) => {
      const shown = perTarget.get(p.real.target) ?? 0;
      perTarget.set(p.real.target, shown + 1);
      return shown < limit;
    });
  return {
    title: 'Side-by-side responses',
    blocks: [
      {
        kind: 'examples',
        text: 'The same probe at the same position, real-session context (left) and filler context (right). Responses are untrusted model output, shown as text.',
        items: pairs.map((p) => ({
          tags: [p.real.target, `${p.real.session} ${p.real.position}`, p.real.item],
          panes: [
            { label: 'real', detail: `score ${scoresText(p.real)}`, text: p.real.text },
            { label: 'filler', detail: `score ${scoresText(p.filler)}`, text: p.filler.text },
          ],
        })),
      },
    ],
  };
}

/** What the sections read besides the report: the run's observations (examples) and sessions (trajectory markers, notes). */
export interface PersonaDocumentInput {
  observations: readonly PersonaObservation[];
  sessions: readonly PersonaSessionInfo[];
}

export function personaSections(report: PersonaReport, input?: PersonaDocumentInput): DocumentSection[] {
  return [
    verdictSection(report),
    driftSection(report),
    ...contentPositionSection(report),
    ...referenceSection(report),
    ...extrasDocumentSections(report),
    driftDetailSection(report, input?.sessions ?? []),
    ...designSections(report),
    ...mitigationSection(report),
    ...stressorSections(report),
    ...judgeSections(report),
    countsSection(report),
    ...(input ? [examplesSection(input.observations, 2)] : []),
  ];
}

export function personaDocument(report: PersonaReport, input: PersonaDocumentInput): AuditDocumentPart {
  return { verdicts: personaVerdicts(report), sections: personaSections(report, input) };
}

/** The persona report as Markdown (`echolens persona report`; the library's `renderPersonaMarkdown`). */
export function renderPersonaMarkdown(report: PersonaReport, title = 'Persona drift (ContextEcho) report', input?: PersonaDocumentInput): string {
  return documentMarkdown(title, personaSections(report, input));
}
