import { findAudit } from '../experiment/registry.js';
import type { GateThresholds } from './config.js';
import type { CheckStatus, GateCheck } from './types.js';

export type { CheckStatus, GateCheck } from './types.js';

/**
 * The CI gate, pure: a run's reports and cell counts against thresholds → one
 * check per (run, target, criterion) and an overall verdict. A check whose
 * statistic could not be computed is `skipped` with the reason (it never
 * passes silently, and never fails the gate on its own). The checks of an
 * audit's analysis come from the audit itself (its `gate` member, through the
 * registry), so every registered audit's runs can be gated.
 */

export interface GateRunInput {
  runId: string;
  experiment: string;
  simulated: boolean;
  /** The run's analysis, gated by the registered audit named `experiment` (its `gate` member). */
  report?: unknown;
  /** Distinct cells of the run and those that failed or stayed pending. */
  cells: { total: number; unfinished: number };
  /** Set when the run has not finished every stage (experiment/run-completeness.ts): the gate fails it unanalysed. */
  incomplete?: string;
  /** Set when the targets' answers fail the sanity check (gate/sanity.ts): every check is skipped and the verdict is "not computable". */
  notComputable?: string;
}

/** `not computable`: the answers cannot come from a model reading its requests (gate/sanity.ts); never a pass. */
export type Verdict = 'pass' | 'fail' | 'not computable';

/** Many verdicts as one: not computable over fail over pass. */
export function overallVerdict(verdicts: readonly Verdict[]): Verdict {
  return verdicts.includes('not computable') ? 'not computable' : verdicts.includes('fail') ? 'fail' : 'pass';
}

export interface GateResult {
  verdict: Verdict;
  thresholds: GateThresholds;
  /** True when any run gated used a simulated (`sim:`) model: its verdict measures nothing real. */
  simulated: boolean;
  checks: GateCheck[];
  counts: Record<CheckStatus, number>;
}

function runChecks(run: GateRunInput, t: GateThresholds): GateCheck[] {
  const check = (name: string, status: CheckStatus, message: string): GateCheck[] => [
    { run: run.runId, audit: 'run', subject: run.runId, name, status, message },
  ];
  if (run.notComputable !== undefined) return check('answers-vary', 'skipped', `not computable: ${run.notComputable}`);
  if (run.incomplete !== undefined) return check('complete', 'fail', run.incomplete);
  const { total, unfinished } = run.cells;
  const share = total === 0 ? 0 : unfinished / total;
  const message = `${unfinished} of ${total} cells failed or unfinished (${(100 * share).toFixed(1)}%), limit ${(100 * t.maxFailedCells).toFixed(1)}%`;
  return check('max-failed-cells', share > t.maxFailedCells ? 'fail' : 'pass', message);
}

/** The checks each registered audit makes of the analysis the run carries for it. */
function auditChecks(run: GateRunInput, thresholds: GateThresholds): GateCheck[] {
  if (run.report === undefined || run.notComputable !== undefined) return [];
  const gate = findAudit(run.experiment)?.gate;
  return gate === undefined ? [] : gate.check(run.report, thresholds, run.runId);
}

export function evaluateGate(runs: readonly GateRunInput[], thresholds: GateThresholds): GateResult {
  const checks = runs.flatMap((run) => [...runChecks(run, thresholds), ...auditChecks(run, thresholds)]);
  const counts: Record<CheckStatus, number> = { pass: 0, fail: 0, skipped: 0 };
  for (const c of checks) counts[c.status] += 1;
  return {
    verdict: runs.some((r) => r.notComputable !== undefined) ? 'not computable' : counts.fail > 0 ? 'fail' : 'pass',
    thresholds,
    simulated: runs.some((r) => r.simulated),
    checks,
    counts,
  };
}
