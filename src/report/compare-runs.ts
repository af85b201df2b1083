import { InvalidArgumentError } from '../core/errors.js';
import type { AnalyzedRun } from '../experiment/audit.js';
import { findAudit } from '../experiment/registry.js';
import type { RunInfo } from '../store/run-store.js';
import type { CompareRunsOptions, RunComparison, RunDifference } from './compare-types.js';
import { signed } from './format.js';

/**
 * Two runs of the same audit compared number by number: the B − A difference of each headline
 * statistic with a paired bootstrap interval over the design units the runs share. Which
 * statistic and which unit is the audit's own (its `compare` member: persona positions or
 * sessions, memory questions, continuation cutpoints). Pure over the two analysed runs.
 * docs/statistics.md, "Comparing runs".
 */

export type { CompareRunsOptions, RunComparison, RunDifference } from './compare-types.js';

/** Refuses runs of different audits (nothing they measure is comparable). */
export function checkSameAudit(a: RunInfo, b: RunInfo, names: { a: string; b: string } = { a: 'run A', b: 'run B' }): void {
  if (a.experiment !== b.experiment) {
    throw new InvalidArgumentError(
      'compare',
      `${names.a} (${a.id}) is a ${a.experiment} run and ${names.b} (${b.id}) a ${b.experiment} run; compare only runs of the same audit`,
    );
  }
}

/** The B − A differences of two analysed runs of one registered audit (none when it has no `compare` member). */
export function compareAnalyzedRuns(
  audit: string,
  a: AnalyzedRun<unknown, unknown>,
  b: AnalyzedRun<unknown, unknown>,
  options: CompareRunsOptions = {},
): RunComparison {
  checkSameAudit(a.run, b.run);
  const resolved = { B: options.B ?? 2000, seed: options.seed ?? 42 };
  const compare = findAudit(audit)?.compare;
  const rows: RunDifference[] = compare === undefined ? [] : compare(a, b, resolved);
  return { audit, a: a.run.id, b: b.run.id, ...resolved, rows };
}

/** "A → B, B − A [CI]" for one row, in the row's scale. */
/**
 * A compare row as text: `a` / `b` = each run's statistic on the shared units (what the difference
 * is of), `ownA` / `ownB` = each run's own estimate over all its units (its report's figure).
 */
export function differenceText(row: RunDifference): { a: string; b: string; difference: string; ownA: string; ownB: string } {
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(0)}%`;
  const pp = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(0)} pp`;
  const value = row.scale === 'percent' ? pct : signed;
  const own = (x: number | null | undefined) => (x === null || x === undefined ? '—' : value(x));
  const ownA = own(row.own?.a);
  const ownB = own(row.own?.b);
  if ('error' in row.result) return { a: '—', b: '—', difference: `n/a (${row.result.error})`, ownA, ownB };
  const r = row.result;
  if (row.scale === 'percent') return { a: pct(r.a), b: pct(r.b), difference: `${pp(r.difference)} [${pp(r.ci[0])}, ${pp(r.ci[1])}]`, ownA, ownB };
  return { a: signed(r.a), b: signed(r.b), difference: `${signed(r.difference)} [${signed(r.ci[0])}, ${signed(r.ci[1])}]`, ownA, ownB };
}
