import { changeFails, changeText } from '../report/baseline.js';
import type { BaselineComparison } from '../report/history.js';
import type { GateThresholds } from './config.js';
import type { GateResult } from './evaluate.js';
import type { CheckStatus, GateCheck } from './types.js';

/**
 * `echolens gate --baseline`: one check per headline statistic of each design, failing when the
 * change from the baseline run is significant (p < 0.05, i.e. 0 outside its 95% interval: one
 * procedure, report/baseline.ts) and larger than `maxChange` in absolute value. A statistic that
 * could not be compared is skipped with the reason. Pure.
 */
export function baselineGate(
  comparisons: readonly BaselineComparison[],
  maxChange: number,
  thresholds: GateThresholds,
  simulated: boolean,
  single: ReadonlyArray<{ design: string; audit: string; run: string }> = [],
): GateResult {
  // A design measured once (a scheduled job's first run) has nothing to compare yet: skipped, not failed.
  const firsts: GateCheck[] = single.map((s) => ({
    run: s.run,
    audit: s.audit,
    subject: s.design,
    name: 'max-change',
    status: 'skipped',
    message: `one measurement of design ${s.design} so far: it is the baseline of the next (measure again with --fresh)`,
  }));
  const checks: GateCheck[] = firsts.concat(
    comparisons.flatMap((c) =>
      c.rows.map((row): GateCheck => {
        const status: CheckStatus = 'error' in row.change ? 'skipped' : changeFails(row, maxChange) ? 'fail' : 'pass';
        return {
          run: c.latest.run,
          audit: c.audit,
          subject: row.subject,
          name: `max-change:${row.statistic}`,
          status,
          message: `change since ${c.baseline.tag ?? c.baseline.run} (${c.baseline.measuredAt.slice(0, 10)}) ${changeText(row)}; fails when p < 0.05 and |change| > ${maxChange}`,
        };
      }),
    ),
  );
  const counts: Record<CheckStatus, number> = { pass: 0, fail: 0, skipped: 0 };
  for (const check of checks) counts[check.status] += 1;
  return { verdict: counts.fail > 0 ? 'fail' : 'pass', thresholds: { ...thresholds, maxChange }, simulated, checks, counts };
}
