import type { AuditCsvRow } from '../experiment/audit.js';
import type { GapEstimate, Maybe, PersonaReport } from './analysis.js';
import type { UnitInference } from './inference.js';

/**
 * CSV rows of the further analyses (consensus, harness, framing, anchor ablations), in the
 * persona CSV's columns: kind, target, judge, level, name, estimate, lo, hi, n, p, pHolm.
 */

const estimateCells = (g: Maybe<GapEstimate | UnitInference>): unknown[] =>
  'error' in g ? [null, null, null, null, null] : [g.estimate, g.ci[0], g.ci[1], g.units, g.p];

export function extrasCsvRows(p: PersonaReport): AuditCsvRow[] {
  const rows: AuditCsvRow[] = [];
  for (const c of p.consensus ?? []) {
    rows.push(['consensus', c.target, c.judges.join('+'), c.level, 'pooled', c.estimate, c.ci[0], c.ci[1], c.units, c.p, null]);
    for (const j of c.perJudge) rows.push(['consensus_per_judge', c.target, j.judge, c.level, 'judge', j.estimate, j.ci[0], j.ci[1], c.units, null, null]);
  }
  for (const h of p.harness ?? []) {
    for (const l of h.harnesses)
      rows.push(['harness', h.target, h.judge, l.level ?? '', l.harness, l.estimate, l.ci?.[0] ?? null, l.ci?.[1] ?? null, l.sessions.length, null, null]);
    rows.push([
      'harness_difference',
      h.target,
      h.judge,
      h.underpowered ? 'underpowered' : 'session',
      h.difference.contrast,
      h.difference.estimate,
      h.difference.ci?.[0] ?? null,
      h.difference.ci?.[1] ?? null,
      null,
      h.difference.p,
      null,
    ]);
  }
  for (const f of p.framing ?? []) {
    rows.push(['framing_gap', f.target, f.judge, '', 'framed', ...estimateCells(f.framed), null]);
    rows.push(['framing_gap', f.target, f.judge, '', 'bare', ...estimateCells(f.bare), null]);
    rows.push(['framing_difference', f.target, f.judge, '', 'bare-framed', ...estimateCells(f.difference), null]);
  }
  for (const a of p.anchorAblation ?? [])
    rows.push([
      'anchor_ablation_vs_control',
      a.target,
      a.judge,
      `${a.placement}/${a.turns} turns`,
      `${a.arm}/${a.tokens} tokens`,
      ...estimateCells(a.vsControl),
      null,
    ]);
  return rows;
}
