import type { MemoryReport } from '../memory-drift/analysis.js';
import type { PersonaReport } from '../persona-drift/analysis.js';
import type { GateThresholds } from './config.js';

/**
 * The CI gate, pure: a run's reports and cell counts against thresholds → one
 * check per (run, target, criterion) and an overall verdict. A check whose
 * statistic could not be computed is `skipped` with the reason (it never
 * passes silently, and never fails the gate on its own).
 */

export type CheckStatus = 'pass' | 'fail' | 'skipped';

export interface GateCheck {
  run: string;
  audit: 'persona' | 'memory' | 'run';
  /** The model under test (target, or `target judged by judge`), or the run for run-level checks. */
  subject: string;
  /** Criterion id, e.g. `significant-drift`, `max-elevation:persona`. */
  name: string;
  status: CheckStatus;
  /** One sentence: the value, its interval and the threshold. */
  message: string;
}

export interface GateRunInput {
  runId: string;
  experiment: string;
  simulated: boolean;
  persona?: PersonaReport;
  memory?: MemoryReport;
  /** Distinct cells of the run and those that failed or stayed pending. */
  cells: { total: number; unfinished: number };
}

export type Verdict = 'pass' | 'fail';

export interface GateResult {
  verdict: Verdict;
  thresholds: GateThresholds;
  /** True when any run gated used a simulated (`sim:`) model: its verdict measures nothing real. */
  simulated: boolean;
  checks: GateCheck[];
  counts: Record<CheckStatus, number>;
}

const num = (x: number) => (Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(3));
const signed = (x: number) => (x >= 0 ? `+${num(x)}` : num(x));
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`;

function personaChecks(run: GateRunInput, report: PersonaReport, t: GateThresholds): GateCheck[] {
  const checks: GateCheck[] = [];
  for (const d of report.drift) {
    const subject = `${d.target} (judge ${d.judge})`;
    const base = { run: run.runId, audit: 'persona' as const, subject };
    if ('error' in d.gap) {
      if (t.significantDrift || t.maxDrift !== null) {
        checks.push({ ...base, name: 'drift', status: 'skipped', message: `drift gap not computable: ${d.gap.error}` });
      }
      continue;
    }
    const { estimate, ci } = d.gap;
    const stated = `Δ = ${signed(estimate)} [95% CI ${signed(ci[0])}, ${signed(ci[1])}]`;
    if (t.significantDrift) {
      const fail = ci[0] > 0;
      checks.push({
        ...base,
        name: 'significant-drift',
        status: fail ? 'fail' : 'pass',
        message: fail ? `${stated}: the register drops significantly in the real context` : `${stated}: no significant drift`,
      });
    }
    if (t.maxDrift !== null) {
      const fail = estimate > t.maxDrift;
      checks.push({
        ...base,
        name: 'max-drift',
        status: fail ? 'fail' : 'pass',
        message: `${stated} ${fail ? 'is above' : 'is within'} the limit ${num(t.maxDrift)}`,
      });
    }
  }
  return checks;
}

const GATED_TIERS = ['persona', 'life_event'] as const;

function memoryChecks(run: GateRunInput, report: MemoryReport, t: GateThresholds): GateCheck[] {
  const checks: GateCheck[] = [];
  const alpha = report.options.alpha;
  for (const target of report.targets) {
    const base = { run: run.runId, audit: 'memory' as const, subject: target.target };
    for (const tierName of GATED_TIERS) {
      const tier = target.metrics.dtw.tiers.find((x) => x.tier === tierName);
      if (!tier) continue;
      if ('error' in tier.elevation) {
        if (t.significantElevation || t.maxElevation !== null) {
          checks.push({ ...base, name: `elevation:${tierName}`, status: 'skipped', message: `${tierName} DTW elevation not computable: ${tier.elevation.error}` });
        }
        continue;
      }
      const e = tier.elevation;
      const stated = `${tierName} DTW elevation ${pct(e.estimate)} [95% CI ${pct(e.ci[0])}, ${pct(e.ci[1])}], p = ${e.p.toFixed(4)}`;
      if (t.significantElevation) {
        const fail = e.p < alpha && e.estimate > 0;
        checks.push({
          ...base,
          name: `significant-elevation:${tierName}`,
          status: fail ? 'fail' : 'pass',
          message: `${stated}: ${fail ? `significant at α = ${alpha}` : 'not significant'}`,
        });
      }
      if (t.maxElevation !== null) {
        const fail = e.estimate > t.maxElevation;
        checks.push({
          ...base,
          name: `max-elevation:${tierName}`,
          status: fail ? 'fail' : 'pass',
          message: `${stated} ${fail ? 'is above' : 'is within'} the limit ${pct(t.maxElevation)}`,
        });
      }
    }
  }
  return checks;
}

function runChecks(run: GateRunInput, t: GateThresholds): GateCheck[] {
  const { total, unfinished } = run.cells;
  const share = total === 0 ? 0 : unfinished / total;
  const fail = share > t.maxFailedCells;
  return [
    {
      run: run.runId,
      audit: 'run',
      subject: run.runId,
      name: 'max-failed-cells',
      status: fail ? 'fail' : 'pass',
      message: `${unfinished} of ${total} cells failed or unfinished (${(100 * share).toFixed(1)}%), limit ${(100 * t.maxFailedCells).toFixed(1)}%`,
    },
  ];
}

export function evaluateGate(runs: readonly GateRunInput[], thresholds: GateThresholds): GateResult {
  const checks: GateCheck[] = [];
  for (const run of runs) {
    checks.push(...runChecks(run, thresholds));
    if (run.persona) checks.push(...personaChecks(run, run.persona, thresholds));
    if (run.memory) checks.push(...memoryChecks(run, run.memory, thresholds));
  }
  const counts: Record<CheckStatus, number> = { pass: 0, fail: 0, skipped: 0 };
  for (const c of checks) counts[c.status] += 1;
  return {
    verdict: counts.fail > 0 ? 'fail' : 'pass',
    thresholds,
    simulated: runs.some((r) => r.simulated),
    checks,
    counts,
  };
}
