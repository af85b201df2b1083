import type { AuditCsvRow } from '../experiment/audit.js';
import type { GapEstimate, Maybe, PersonaReport } from './analysis.js';
import { extrasCsvRows } from './extras-csv.js';

/** The persona report as long-format CSV rows (one estimate per row with its CI). */

/** Estimate, the claim's interval (the one that agrees with the deciding p: Holm-consistent in a family), n. */
function gapCells(gap: Maybe<GapEstimate>): unknown[] {
  return 'error' in gap ? [null, null, null, null] : [gap.estimate, gap.claim.interval[0], gap.claim.interval[1], gap.nReal + gap.nFiller];
}

/** The test's own p and the deciding (Holm-adjusted) p of an estimate's claim; the adjusted one is null outside a family. */
function claimPs(gap: Maybe<GapEstimate>): unknown[] {
  return 'error' in gap ? [null, null] : [gap.claim.pRaw, gap.claim.family > 1 ? gap.claim.p : null];
}

export function personaCsvRows(p: PersonaReport): AuditCsvRow[] {
  const rows: AuditCsvRow[] = [];
  for (const d of p.drift) {
    const flip = 'error' in d.gap ? [null, null] : [d.gap.claim.pRaw, d.gap.claim.p];
    rows.push(['drift', d.target, d.judge, '', 'position-averaged', ...gapCells(d.gap), ...flip]);
    for (const pos of d.byPosition) rows.push(['drift_by_position', d.target, d.judge, pos.session, pos.position, ...gapCells(pos.gap), null, null]);
    for (const c of d.byCategory) rows.push(['drift_by_category', d.target, d.judge, '', c.category, ...gapCells(c.gap), null, null]);
    for (const a of d.referenceArms) rows.push(['reference_arm', d.target, d.judge, '', a.arm, ...gapCells(a.gap), null, null]);
  }
  for (const m of p.mitigations) {
    rows.push(['mitigation_vs_control', m.target, m.judge, m.distance, m.mitigation, ...gapCells(m.vsControl), ...claimPs(m.vsControl)]);
    if (m.vsPlacebo) rows.push(['mitigation_vs_placebo', m.target, m.judge, m.distance, m.mitigation, ...gapCells(m.vsPlacebo), ...claimPs(m.vsPlacebo)]);
    rows.push(['mitigation_recovery', m.target, m.judge, m.distance, m.mitigation, m.recovery, null, null, m.n, null, null]);
  }
  for (const s of p.stressors)
    rows.push(['stressor_compliance', s.target, '', `${s.arm}/${s.mitigation}`, s.item, s.complianceRate, null, null, s.n, null, null]);
  for (const v of p.verbosity) {
    rows.push(['verbosity_median_ratio', v.target, '', '', v.item, v.medianRatio, null, null, v.pairs, null, null]);
    rows.push(['verbosity_conditional_ratio', v.target, '', '', v.item, v.conditionalRatio, null, null, v.conditionalPairs, null, null]);
    rows.push(['compliance_gap_pp', v.target, '', '', v.item, v.complianceGapPp, null, null, v.pairs, null, null]);
  }
  for (const c of p.contracts)
    rows.push(['contract_pass_rate', c.target, '', `${c.arm}/${c.mitigation}/${c.distance}`, c.item, c.passRate, null, null, c.n, null, null]);
  for (const c of p.contractContrasts) {
    const d = 'error' in c.difference ? [null, null, null] : [c.difference.estimate, c.difference.claim.interval[0], c.difference.claim.interval[1]];
    rows.push(['contract_contrast', c.target, '', c.distance, c.contrast, ...d, c.sessions, ...claimPs(c.difference)]);
  }
  for (const c of p.compaction) {
    const t = c.tost && !('error' in c.tost) ? c.tost : null;
    rows.push(['compaction_change', c.target, c.judge, '', 'post-pre', c.meanChange, t?.ci[0] ?? null, t?.ci[1] ?? null, c.events.length, t?.p ?? null, null]);
  }
  rows.push(...extrasCsvRows(p));
  for (const a of p.counts.byArm)
    rows.push(['dropout_rate', a.target, '', `${a.arm}/${a.mitigation}`, a.surface, a.dropoutRate, null, null, a.done + a.empty + a.failed, null, null]);
  return rows;
}
