import { forestSpec, type IntervalRow, shortLabel } from '../report/charts.js';
import { documentVerdict } from '../report/document/build.js';
import { int, intervalCell, num, para, pCell, table, text } from '../report/document/cells.js';
import { documentMarkdown } from '../report/document/render-markdown.js';
import type { AuditDocumentPart, DocumentBlock, DocumentCell, DocumentSection, DocumentVerdict } from '../report/document/types.js';
import { pClause, pValue as pv, signed as signedNumber } from '../report/format.js';
import type { PairedEstimate } from './analysis.js';
import type { ContinuationCalibration } from './calibrate.js';
import type { ContinuationReport } from './run.js';

/**
 * The continuation audit's result document (pure): its verdicts and its report sections as data
 * (tables of typed cells, the forest chart, notes). The shared renderers (report/document/) draw
 * it as HTML and Markdown. Model output never appears here, only scores.
 */

const signed = (x: number | null) => signedNumber(x, 3);
export const continuationCiText = (e: PairedEstimate): string => (e.ci ? `${signed(e.mean)} [${signed(e.ci[0])}, ${signed(e.ci[1])}]` : signed(e.mean));

/** The primary contrast's verdict in words: detected, not detected, or underpowered (docs/continuation.md, "Power"). */
export function primaryVerdict(
  e: PairedEstimate,
  power: { mde: number | null; effectOfInterest: number; underpowered: boolean | null } | undefined,
  a: string,
  b: string,
): string {
  if (e.mean === null || e.ci === null) return `not computable (${e.reason ?? 'no interval'})`;
  if (e.ci[0] > 0 || e.ci[1] < 0) return `${a} context ${e.mean > 0 ? 'raises' : 'lowers'} fidelity over ${b}`;
  if (power?.underpowered && power.mde !== null) {
    return `underpowered: no ${a} − ${b} difference detected, but this run could only detect |Δ| ≥ ${power.mde.toFixed(2)} (effect of interest ${power.effectOfInterest}); add cutpoints`;
  }
  return `no detectable ${a} − ${b} difference${power?.mde != null ? ` (this run detects |Δ| ≥ ${power.mde.toFixed(2)} at 80% power)` : ''}`;
}

/**
 * Per target: the primary contrast (recent − cross argument fidelity) with its 95% interval,
 * complete case and intention to treat, and the parseable calls per arm — every number read from
 * `report.analysis`, as in the JSON. The verdict reads the intention-to-treat estimate, the one the
 * gate checks, so the headline's MDE and the gate's are one number (docs/continuation.md).
 */
export function continuationVerdicts(report: ContinuationReport): DocumentVerdict[] {
  const level = `${Math.round(100 * (1 - report.analysis.alpha))}%`;
  return report.analysis.targets.map((t): DocumentVerdict => {
    const p = t.contrasts.find((c) => c.primary);
    if (!p) return documentVerdict({ subject: t.target, verdict: 'not computable', tone: 'neutral', numbers: [] });
    const itt = p.itt;
    const power = t.power?.itt;
    const excludesZero = itt.ci !== null && (itt.ci[0] > 0 || itt.ci[1] < 0);
    const callText = [p.a, p.b].map((arm) => {
      const a = t.attrition.find((x) => x.arm === arm);
      return a ? `${arm} ${a.calls}/${a.attempted}` : `${arm} n/a`;
    });
    return documentVerdict({
      subject: t.target,
      verdict: primaryVerdict(itt, power, p.a, p.b),
      tone: itt.mean === null || itt.ci === null || !excludesZero ? 'neutral' : 'alert',
      estimate: itt.mean,
      interval: itt.ci,
      p: itt.p,
      mde: power?.mde ?? null,
      effectOfInterest: power?.effectOfInterest ?? null,
      underpowered: itt.mean !== null && itt.ci !== null && !excludesZero && power?.underpowered === true && power.mde !== null,
      numbers: [
        { label: `${p.a} − ${p.b} fidelity, ITT [${level} CI]`, value: continuationCiText(itt), detail: `n ${itt.n} cutpoints, sign-flip p ${pv(itt.p)}` },
        {
          label: `${p.a} − ${p.b} fidelity, complete case [${level} CI]`,
          value: continuationCiText(p.completeCase),
          detail: `n ${p.completeCase.n} cutpoints, sign-flip p ${pv(p.completeCase.p)}`,
        },
        {
          label: 'parseable calls',
          value: callText.join(' · '),
          detail: `${t.cutpoints} cutpoints (${t.sameTaskCutpoints} same-task, ${t.crossTaskCutpoints} cross-task)`,
        },
      ],
    });
  });
}

const KINDS = [
  ['completeCase', 'complete case'],
  ['itt', 'ITT'],
] as const;

/** The row cells of one estimate: role, n, Δ, CI, p and how it was tested. */
function estimateCells(e: PairedEstimate): DocumentCell[] {
  const method = e.method === null ? (e.reason ?? '—') : e.method === 'exact' ? 'exact' : `${e.resamples} resamples`;
  // A test that cannot reach p < α says so in its row (docs/continuation.md).
  return [
    text(e.role),
    int(e.n),
    num(e.mean, 'signed', 3),
    intervalCell(null, e.ci, 'signed', 3),
    pCell(e.p),
    text(`${method}${e.warning ? ' · cannot reach p < α' : ''}`),
  ];
}

function contrastChart(report: ContinuationReport): DocumentBlock[] {
  const rows: IntervalRow[] = [];
  for (const t of report.analysis.targets)
    for (const c of t.contrasts)
      for (const [kind, group] of KINDS) {
        const e = c[kind];
        if (e.mean !== null && e.ci)
          rows.push({
            label: `${shortLabel(t.target, 24)} · ${c.a} − ${c.b}`,
            estimate: e.mean,
            lo: e.ci[0],
            hi: e.ci[1],
            group,
            tip: `${t.target}, ${c.a} − ${c.b} (${group}, ${e.role}): ${continuationCiText(e)}, n ${e.n}, p ${pv(e.p)}${e.role === 'exploratory' ? ' (unadjusted)' : ''}`,
          });
      }
  if (rows.length === 0) return [];
  return [
    {
      kind: 'chart',
      id: 'continuation-contrasts',
      title: 'Argument fidelity differences between arms',
      spec: forestSpec(rows, { xTitle: 'Δ argument fidelity (a − b)' }),
      caption: 'Point = mean paired difference, bar = 95% interval over cutpoints (the sign-flip test inverted).',
    },
  ];
}

function introSection(report: ContinuationReport): DocumentSection {
  const blocks: DocumentBlock[] = [];
  if (report.simulated)
    blocks.push(para([{ strong: 'Simulated targets (sim:): nothing was measured.' }, ' The numbers show the audit works, not how any model behaves.'], true));
  blocks.push(
    para([
      'Run ',
      { code: report.runId },
      ' · session ',
      { code: report.session ?? '?' },
      ' · cross arm from ',
      { code: report.crossSession ?? 'the same session (half a session away)' },
    ]),
    para([
      'Tools offered: ',
      ...(report.tools.length === 0 ? ['—'] : report.tools.flatMap((t, i) => [...(i > 0 ? [', '] : []), { code: t }])),
      ` (${report.toolSource ?? '?'}) · task labels: ${report.taskSource ?? '?'}`,
    ]),
    para([
      'Argument fidelity (0–1) of the next tool call against the one recorded in the transcript, paired by cutpoint. ',
      { strong: 'Complete case' },
      ': cutpoints where both arms returned a parseable call. ',
      { strong: 'ITT' },
      ' (intention to treat): every cutpoint where both arms were generated, an unparseable, prose or missing answer scoring 0. Two-sided paired sign-flip test; its inverted 95% interval (excludes 0 exactly when p < 0.05).',
    ]),
  );
  if (report.judge) {
    const j = report.judge;
    blocks.push(
      para([
        'Judge ',
        { code: j.model ?? '?' },
        ` on free-text and command arguments below an exact match: ${j.questions} distinct questions, ${j.equivalent} equivalent (scored 1), ${j.different} different, ${j.invalid} unreadable, ${j.unanswered} unanswered (deterministic score kept).`,
      ]),
    );
  }
  if (report.notes.length > 0) blocks.push({ kind: 'list', items: report.notes.map((n) => `note: ${n}`) });
  blocks.push(...contrastChart(report));
  return { title: '', blocks };
}

function targetSection(t: ContinuationReport['analysis']['targets'][number]): DocumentSection {
  const blocks: DocumentBlock[] = [{ kind: 'text', text: `${t.cutpoints} cutpoints (${t.sameTaskCutpoints} same-task, ${t.crossTaskCutpoints} cross-task).` }];
  const primary = t.contrasts.find((c) => c.primary);
  if (primary) {
    const e = (x: PairedEstimate) => `${signedNumber(x.mean, 3, '—')} (n = ${x.n}, ${pClause(x.p, '—')})`;
    blocks.push(
      { kind: 'text', text: [{ strong: 'Primary contrast, recent − cross:' }, ` complete case ${e(primary.completeCase)}, ITT ${e(primary.itt)}.`] },
      { kind: 'text', text: `Verdict (complete case): ${primaryVerdict(primary.completeCase, t.power?.completeCase, primary.a, primary.b)}.` },
      { kind: 'text', text: `Verdict (ITT): ${primaryVerdict(primary.itt, t.power?.itt, primary.a, primary.b)}.` },
    );
  }
  if (t.warnings.length > 0) blocks.push({ kind: 'list', items: t.warnings.map((w) => `warning: ${w}`) });
  blocks.push(
    { kind: 'heading', text: 'Attrition per arm' },
    table(
      ['arm', 'attempted', 'generated', 'parseable calls', 'unparseable', 'prose', 'missing', 'not generated', 'mean fidelity (calls)', 'mean fidelity (ITT)'],
      t.attrition.map((a) => [
        text(a.arm),
        ...[a.attempted, a.generated, a.calls, a.unparseable, a.prose, a.missing, a.notGenerated].map(int),
        num(a.meanFidelity, 'fixed', 3),
        num(a.meanFidelityItt, 'fixed', 3),
      ]),
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
    ),
    { kind: 'heading', text: 'Every contrast' },
    para([
      'Only the two ',
      { strong: 'primary' },
      ' rows (recent − cross over all cutpoints, complete case and ITT) test the pre-specified question. Every other row is ',
      { strong: 'exploratory' },
      ': its p-value is unadjusted, one of many per target, and by chance alone about one in twenty will fall below 0.05.',
    ]),
    table(
      ['contrast', 'analysis', 'stratum', 'role', 'n', 'Δ fidelity', '95% CI', 'p', 'test'],
      t.contrasts.flatMap((c) => {
        const name = text(`${c.a} − ${c.b}${c.primary ? ' (primary)' : ''}`);
        return KINDS.flatMap(([kind, label]) => [
          [name, text(label), text('all'), ...estimateCells(c[kind])],
          [name, text(label), text('same-task'), ...estimateCells(c.strata.sameTask[kind])],
          [name, text(label), text('cross-task'), ...estimateCells(c.strata.crossTask[kind])],
        ]);
      }),
      [4, 5, 6, 7],
    ),
  );
  return { title: t.target, blocks };
}

const differs = (a: number | null, b: number | null) => (a === null) !== (b === null) || (a !== null && b !== null && Math.abs(a - b) > 1e-12);
const differsCell = (d: boolean) => text(d ? 'differs' : 'same', { mark: d });

/** `procedure: reference`: the authors' continuation scoring next to the calibrated one, marking where the two differ. */
function referenceSection(report: ContinuationReport): DocumentSection[] {
  const reference = report.reference;
  if (reference === null) return [];
  const blocks: DocumentBlock[] = [
    para([
      `Scored as the authors' continuation runner scores it: ${reference.scoring}. The verdict, the headline and the gate use the calibrated fidelity above; rows marked `,
      { strong: 'differs' },
      ' are where the two disagree.',
    ]),
  ];
  const estimate = (e: PairedEstimate) => intervalCell(e.mean, e.ci, 'signed', 3, ` (n = ${e.n}, ${pClause(e.p, '—')})`);
  for (const t of reference.targets) {
    const calibrated = report.analysis.targets.find((c) => c.target === t.target);
    blocks.push(
      { kind: 'heading', text: t.target },
      table(
        ['arm', 'generated', 'tool match (M1)', 'argument similarity of matching calls (M2)', 'mean fidelity, calibrated', 'mean fidelity, authors', ''],
        t.arms.map((arm) => {
          const mine = calibrated?.attrition.find((a) => a.arm === arm.arm)?.meanFidelity ?? null;
          const theirs = t.analysis.attrition.find((a) => a.arm === arm.arm)?.meanFidelity ?? null;
          return [
            text(arm.arm),
            int(arm.generated),
            num(arm.toolMatches, 'integer', undefined, ` (${arm.toolMatchRate === null ? '—' : `${(100 * arm.toolMatchRate).toFixed(0)}%`})`),
            num(arm.argSimilarity, 'fixed', 3),
            num(mine, 'fixed', 3),
            num(theirs, 'fixed', 3),
            differsCell(differs(mine, theirs)),
          ];
        }),
        [1, 2, 3, 4, 5],
      ),
      table(
        ['contrast', 'analysis', 'Δ fidelity, calibrated [95% CI]', 'Δ fidelity, authors [95% CI]', ''],
        t.analysis.contrasts.flatMap((c) => {
          const mine = calibrated?.contrasts.find((x) => x.a === c.a && x.b === c.b);
          if (!mine) return [];
          return KINDS.map(([kind, label]) => [
            text(`${c.a} − ${c.b}${c.primary ? ' (primary)' : ''}`),
            text(label),
            estimate(mine[kind]),
            estimate(c[kind]),
            differsCell(differs(mine[kind].mean, c[kind].mean) || differs(mine[kind].p, c[kind].p)),
          ]);
        }),
        [2, 3],
      ),
    );
  }
  return [{ title: 'The authors’ scoring (procedure: reference)', blocks }];
}

function cutpointsSection(report: ContinuationReport): DocumentSection {
  return {
    title: 'Cutpoints',
    blocks: [
      table(
        ['cutpoint', 'line', 'position', 'ground-truth tool', 'task', 'recent window task', 'stratum'],
        report.cutpoints.map((c) => [
          text(c.id),
          int(c.line),
          num(c.fraction, 'share', 0),
          text(c.groundTruth.name, { code: true }),
          text(c.task),
          text(c.windowTask ?? '—'),
          text(c.sameTask === null ? '—' : c.sameTask ? 'same-task' : 'cross-task'),
        ]),
        [1, 2],
      ),
    ],
  };
}

export function continuationSections(report: ContinuationReport): DocumentSection[] {
  return [introSection(report), ...report.analysis.targets.map(targetSection), ...referenceSection(report), cutpointsSection(report)];
}

export function continuationDocument(report: ContinuationReport): AuditDocumentPart {
  return { verdicts: continuationVerdicts(report), sections: continuationSections(report) };
}

/** The continuation report as Markdown (`echolens continuation report`). */
export function renderContinuationMarkdown(report: ContinuationReport): string {
  return documentMarkdown('Tool-using continuation audit', continuationSections(report));
}

/** A rate with its Monte Carlo SE, or `—`. */
const rateText = (r: { rate: number; mcSE: number } | null | undefined): string => (r ? `${r.rate.toFixed(3)} ± ${r.mcSE.toFixed(3)}` : '—');

/** `continuation calibrate` as a document: per profile, the design and every test's rejection rate, coverage, bias and SE. */
export function continuationCalibrationSections(results: readonly ContinuationCalibration[]): DocumentSection[] {
  return results.map((r) => ({
    title: `${r.profile} — planted recent − cross: complete case ${r.planted.completeCase.toFixed(3)}, ITT ${r.planted.itt.toFixed(3)}`,
    blocks: [
      para(
        `${r.design.replicates} simulated runs × ${r.design.cutpoints} cutpoints, seed ${r.design.seed}, ${r.design.resamples} resamples when not exact.` +
          (r.design.blocks
            ? ` Dependent cutpoints: runs of ${r.design.blocks.size}, each later cutpoint repeating the run's first answer with probability ${r.design.blocks.repeat}; ${r.design.blocks.declared ? 'declared (the runs are the units)' : 'not declared (the cutpoints are the units)'}.`
            : ''),
      ),
      table(
        ['test', 'rejection rate (± MC SE)', 'what it is', '95% CI coverage (± MC SE)', 'bias', 'mean SE'],
        r.tests.map((t) => [
          text(t.test),
          text(rateText(t.rejection)),
          text(r.withinNominal ? `false-positive rate (${r.withinNominal[t.test] ? 'within' : 'ABOVE'} 0.05 + 2 MC SE)` : 'power'),
          text(rateText(t.coverage)),
          num(t.bias, 'fixed', 4),
          num(t.meanStandardError, 'fixed', 4),
        ]),
        [1, 3, 4, 5],
      ),
    ],
  }));
}

/** `continuation calibrate`'s Markdown (the shared renderer). */
export function renderContinuationCalibrationMarkdown(results: readonly ContinuationCalibration[]): string {
  return documentMarkdown('Continuation audit calibration (simulated)', continuationCalibrationSections(results));
}
