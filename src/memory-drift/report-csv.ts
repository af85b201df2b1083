import { hasValue } from '../core/maybe.js';
import type { AuditCsvRow } from '../experiment/audit.js';
import type { MemoryReport } from './analysis.js';

/** One long-format row (AUDIT_CSV_COLUMNS); the memory audit has no judge column. */
function row(
  table: string,
  target: string,
  group: string,
  label: string,
  estimate: unknown,
  n: number,
  interval: readonly [number, number] | null = null,
  p: number | null = null,
  pAdjusted: number | null = null,
): AuditCsvRow {
  return [table, target, '', group, label, estimate, interval?.[0] ?? null, interval?.[1] ?? null, n, p, pAdjusted];
}

/** The memory report as long-format CSV rows (one estimate per row with its CI). */
export function memoryCsvRows(m: MemoryReport): AuditCsvRow[] {
  const rows: AuditCsvRow[] = [];
  for (const t of m.targets) {
    for (const metric of ['dtw', 'sri'] as const) {
      const a = t.metrics[metric];
      for (const c of a.conditions) {
        rows.push(row(`condition_mean_${metric}`, t.target, c.tier, c.condition, c.mean, c.n));
        // Intervals are the ones that agree with the BH-adjusted p (BH across the tier's conditions).
        const e = c.elevation;
        if (hasValue(e)) rows.push(row(`elevation_${metric}`, t.target, c.tier, c.condition, e.estimate, c.n, e.claim.interval, e.p, e.claim.p));
        if (hasValue(c.cohensD)) rows.push(row(`cohens_d_${metric}`, t.target, c.tier, c.condition, c.cohensD, c.n));
      }
      for (const d of a.dRel) {
        // Non-finite interval ends become empty cells.
        const r = d.result;
        if (hasValue(r)) rows.push(row(`d_rel_${metric}`, t.target, d.tier, d.condition, r.dRel, r.nTreat, r.claim.interval, r.p, r.pAdjusted));
      }
    }
    const convergence = t.convergence;
    if (hasValue(convergence) && hasValue(convergence.spearman)) {
      const s = convergence.spearman;
      rows.push(row('convergence_spearman', t.target, '', 'dtw~sri', s.rho, convergence.conditions.length, null, s.p));
    }
  }
  return rows;
}
