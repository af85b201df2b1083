import type { ChartSpec as TopLevelSpec } from '../report/chart-spec.js';
import { forestSpec, type IntervalRow, trajectorySpec } from '../report/charts.js';
import type { GapEstimate, Maybe, PersonaReport } from './analysis.js';
import type { UnitInference } from './inference.js';
import { pValue as pv, signed as f2 } from '../report/format.js';

/**
 * The report's further analyses (consensus, harness, framing, onset, anchor ablation) as rows and
 * chart data; document.ts makes the report's sections of them.
 */

const interval = (estimate: number, ci: readonly [number, number] | null) =>
  ci ? `${f2(estimate)} [${f2(ci[0])}, ${f2(ci[1])}]` : `${f2(estimate)} (no interval)`;
const forestRow = (label: string, group: string, estimate: number, ci: readonly [number, number]): IntervalRow => ({
  label,
  group,
  estimate,
  lo: ci[0],
  hi: ci[1],
});
const maybeText = (g: Maybe<GapEstimate | UnitInference>) => ('error' in g ? `n/a (${g.error})` : `${interval(g.estimate, g.ci)} (${g.units} ${g.level}s)`);

export interface ExtrasSection {
  id: string;
  title: string;
  note: string;
  header: string[];
  rows: string[][];
  /** Interval rows for a forest chart of Δ = filler − real (HTML only). */
  chart?: { rows: IntervalRow[]; caption: string };
  /** Further Vega-Lite charts (HTML only). */
  specs?: Array<{ spec: TopLevelSpec; caption: string }>;
}

export function extrasSections(report: PersonaReport): ExtrasSection[] {
  const out: ExtrasSection[] = [];
  const consensus = report.consensus ?? [];
  if (consensus.length > 0 || (report.consensusSkipped ?? []).length > 0) {
    out.push({
      id: 'persona-consensus',
      title: 'Pooled multi-judge consensus',
      note:
        'Pooled Δ = mean over judges of filler − real at each unit (all judges of a unit kept together), then the same clustered inference as the headline: sign-flip test over the units and its inverted 95% interval (one interval and one p: the interval excludes 0 exactly when p < 0.05). Judge effect: repeated-measures F test (Greenhouse–Geisser corrected) of whether Δ differs between judges.' +
        (report.consensusSkipped ?? []).map((s) => ` ${s.target}: no consensus (${s.reason}).`).join(''),
      header: ['target', 'judges', 'pooled Δ [95% CI]', 'sign-flip p', 'units', 'per judge', 'judge effect', 'signs agree'],
      rows: consensus.map((c) => [
        c.target,
        c.judges.join(', '),
        interval(c.estimate, c.ci),
        `${pv(c.p)}${c.influence?.fragile ? ` (fragile — driven by session ${c.influence.drivenBy})` : ''}`,
        `${c.units} ${c.level}s${c.droppedPositions > 0 ? ` (${c.droppedPositions} positions lacked a judge)` : ''}`,
        c.perJudge.map((j) => `${j.judge} ${interval(j.estimate, j.ci)}`).join('; '),
        'error' in c.judgeEffect
          ? `n/a (${c.judgeEffect.error})`
          : `F(${c.judgeEffect.df1}, ${c.judgeEffect.df2}) = ${c.judgeEffect.F.toFixed(2)}, Greenhouse–Geisser ε = ${c.judgeEffect.epsilon.toFixed(2)}, p = ${pv(c.judgeEffect.p)}`,
        c.signsAgree ? 'yes' : `no (spread ${c.spread.toFixed(2)})`,
      ]),
      chart: {
        rows: consensus.flatMap((c) => [
          forestRow('pooled', c.target, c.estimate, c.ci),
          ...c.perJudge.map((j) => forestRow(j.judge, c.target, j.estimate, j.ci)),
        ]),
        caption: 'Pooled consensus and each judge on the same units, 95% intervals (the sign-flip test inverted).',
      },
    });
  }
  const harness = report.harness ?? [];
  if (harness.length > 0) {
    out.push({
      id: 'persona-harness',
      title: 'Claude Code versus Codex sessions',
      note: 'Each session’s drift gap (its positions averaged) is one unit. Δ per harness is the mean of its sessions; the difference is tested by Welch’s unequal-variance t test over sessions, and its interval is that test inverted (it excludes 0 exactly when p < 0.05).',
      header: ['target', 'judge', 'Claude Code Δ', 'Codex Δ', 'difference [95% CI]', 'Welch p', 'ratio', 'power'],
      rows: harness.map((h) => {
        const level = (name: string) => {
          const l = h.harnesses.find((x) => x.harness === name);
          return l
            ? `${interval(l.estimate, l.ci)}, ${l.sessions.length} session(s)${l.level === 'position' ? ' (over the positions of one session)' : ' (over sessions)'}`
            : '—';
        };
        return [
          h.target,
          h.judge,
          level('claude-code'),
          level('codex'),
          interval(h.difference.estimate, h.difference.ci),
          h.difference.p === null ? 'n/a' : `${pv(h.difference.p)} (${h.difference.method})`,
          h.ratio === null ? '—' : `${h.ratio.toFixed(2)}×`,
          h.underpowered ? `underpowered: ${h.reason}` : 'ok',
        ];
      }),
      chart: {
        rows: harness.flatMap((h) => h.harnesses.flatMap((l) => (l.ci === null ? [] : [forestRow(l.harness, `${h.target} · ${h.judge}`, l.estimate, l.ci)]))),
        caption: 'Δ per harness: 95% interval over its sessions (the sign-flip test inverted), or over the positions of a single session.',
      },
    });
  }
  const framing = report.framing ?? [];
  if (framing.length > 0) {
    out.push({
      id: 'persona-framing',
      title: 'Probe framing ablation',
      note: 'The same probes sent with and without the benchmark framing in one run. The headline uses the first configured level; here: the gap under each, their difference, and the framing’s shift of each arm (framed − bare).',
      header: ['target', 'judge', 'Δ framed', 'Δ bare', 'Δ bare − Δ framed', 'real: framed − bare', 'filler: framed − bare'],
      rows: framing.map((f) => [f.target, f.judge, ...[f.framed, f.bare, f.difference, f.realShift, f.fillerShift].map(maybeText)]),
    });
  }
  const ablation = report.anchorAblation ?? [];
  if (ablation.length > 0) out.push(anchorAblationSection(ablation));
  const onset = report.onset ?? [];
  if (onset.length > 0) {
    out.push({
      id: 'persona-onset',
      title: 'Onset',
      note: `Rule: ${onset[0]?.rule}.`,
      header: ['target', 'judge', 'onset', 'positions tested', 'smallest Holm p', 'why undefined'],
      rows: onset.map((o) => [
        o.target,
        o.judge,
        o.onset ? `${o.onset.session} ${o.onset.position} (${o.onset.positionValue}), Δ ${f2(o.onset.estimate)}, Holm p ${pv(o.onset.pHolm)}` : 'undefined',
        String(o.positionsTested),
        o.smallestPHolm === null ? 'n/a' : pv(o.smallestPHolm),
        o.reason ?? '—',
      ]),
    });
  }
  return out;
}

type AblationRow = PersonaReport['anchorAblation'][number];

/**
 * The anchor-ablation grid: a table of every cell and three charts of the score change over the
 * control — by anchor size (x = measured tokens), by turns since the anchor, and by placement.
 * Each chart varies one factor; a line is one level of the other two (nothing is averaged over them).
 */
function anchorAblationSection(rows: readonly AblationRow[]): ExtrasSection {
  const ok = rows.filter((r): r is AblationRow & { vsControl: GapEstimate } => !('error' in r.vsControl));
  const who = (r: AblationRow) => `${r.target} · ${r.judge}`;
  const line = (r: AblationRow, without: 'size' | 'turns') =>
    without === 'size'
      ? `${who(r)} · ${r.placement} · ${r.turns} turns`
      : `${who(r)} · ${r.placement} · ${r.size === null ? 'own size' : `${r.tokens} tokens`}`;
  const specs: NonNullable<ExtrasSection['specs']> = [];
  const points = (without: 'size' | 'turns', x: (r: AblationRow) => number) =>
    ok.map((r) => ({ series: line(r, without), x: x(r), estimate: r.vsControl.estimate, lo: r.vsControl.ci[0], hi: r.vsControl.ci[1] }));
  const trends = [
    {
      without: 'size',
      x: (r: AblationRow) => r.tokens,
      xTitle: 'anchor size (tokens of the inserted turns)',
      caption: 'Score change over the unmitigated control by anchor size, 95% interval at the sampled unit.',
    },
    {
      without: 'turns',
      x: (r: AblationRow) => r.turns,
      xTitle: 'turns since the anchor',
      caption: 'Decay: score change over the control by the number of exchanges between the anchor and the probe.',
    },
  ] as const;
  for (const { without, x, xTitle, caption } of trends) {
    // A chart only where the factor takes more than one value.
    if (new Set(ok.map(x)).size > 1)
      specs.push({ spec: trajectorySpec(points(without, x), [], { xTitle, yTitle: 'anchor − control (judge points)' }), caption });
  }
  if (new Set(ok.map((r) => r.placement)).size > 1) {
    specs.push({
      spec: forestSpec(
        ok.map((r) =>
          forestRow(`${r.placement} · ${r.size === null ? 'own' : `${r.tokens}t`} · ${r.turns} turns`, who(r), r.vsControl.estimate, r.vsControl.ci),
        ),
        { xTitle: 'anchor − control (judge points)', rules: [0] },
      ),
      caption: 'Score change over the control by placement of the anchor.',
    });
  }
  return {
    id: 'persona-anchor-ablation',
    title: 'Anchor ablations: size, placement, turns since the anchor',
    note: 'Each cell of the anchorAblation grid on the real arm at the headline prompt and distance, against the unmitigated real-context control (per-unit difference, clustered inference). Recovery = (cell − control)/(filler − control) when the gap exceeds 0.05.',
    header: ['target', 'judge', 'arm', 'size (tokens)', 'placement', 'turns since', 'mean', 'n', 'cell − control [95% CI]', 'recovery'],
    rows: rows.map((r) => [
      r.target,
      r.judge,
      r.arm,
      r.size === null ? `own (${r.tokens})` : `${r.size} (${r.tokens})`,
      r.placement,
      String(r.turns),
      r.mean.toFixed(3),
      String(r.n),
      maybeText(r.vsControl),
      r.recovery === null ? '—' : `${(100 * r.recovery).toFixed(1)}%`,
    ]),
    specs,
  };
}

/** Viewer summary lines: the pooled consensus and the harness difference, one line each. */
export function personaExtrasSummary(report: PersonaReport): Array<{ label: string; value: string }> {
  return [
    ...(report.consensus ?? []).map((c) => ({ label: `pooled consensus Δ · ${c.target} · ${c.judges.length} judges`, value: interval(c.estimate, c.ci) })),
    ...(report.harness ?? []).map((h) => ({
      label: `Claude Code − Codex Δ · ${h.target} · ${h.judge}`,
      value: `${interval(h.difference.estimate, h.difference.ci)}${h.underpowered ? ' · underpowered' : ''}`,
    })),
  ];
}
