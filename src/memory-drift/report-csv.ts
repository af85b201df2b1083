import { hasValue } from '../core/maybe.js';
import type { AuditCsvRow } from '../experiment/audit.js';
import type { MemoryReport } from './analysis.js';

/** The memory report as long-format CSV rows (one estimate per row with its CI). */
export function memoryCsvRows(m: MemoryReport): AuditCsvRow[] {
  const rows: AuditCsvRow[] = [];
  for (const t of m.targets) {
    for (const metric of ['dtw', 'sri'] as const) {
      const a = t.metrics[metric];
      for (const c of a.conditions) {
        rows.push([`condition_mean_${metric}`, t.target, '', c.tier, c.condition, c.mean, null, null, c.n, null, null]);
        if (hasValue(c.elevation))
          rows.push([
            `elevation_${metric}`,
            t.target,
            '',
            c.tier,
            c.condition,
            c.elevation.estimate,
            // The interval that agrees with the BH-adjusted p (BH across the tier's conditions).
            c.elevation.claim.interval[0],
            c.elevation.claim.interval[1],
            c.n,
            c.elevation.p,
            c.elevation.claim.p,
          ]);
        if (hasValue(c.cohensD)) rows.push([`cohens_d_${metric}`, t.target, '', c.tier, c.condition, c.cohensD, null, null, c.n, null, null]);
      }
      for (const d of a.dRel) {
        if (hasValue(d.result))
          rows.push([
            `d_rel_${metric}`,
            t.target,
            '',
            d.tier,
            d.condition,
            d.result.dRel,
            // The interval that agrees with the BH-adjusted p (non-finite ends are empty cells).
            d.result.claim.interval[0],
            d.result.claim.interval[1],
            d.result.nTreat,
            d.result.p,
            d.result.pAdjusted,
          ]);
      }
    }
    if (hasValue(t.convergence) && hasValue(t.convergence.spearman)) {
      rows.push([
        'convergence_spearman',
        t.target,
        '',
        '',
        'dtw~sri',
        t.convergence.spearman.rho,
        null,
        null,
        t.convergence.conditions.length,
        t.convergence.spearman.p,
        null,
      ]);
    }
  }
  return rows;
}
