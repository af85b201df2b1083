import type { GateThresholds } from '../gate/config.js';
import type { GateCheck } from '../gate/evaluate.js';
import { gateNumber, gateSigned } from '../gate/format.js';
import type { PersonaReport } from './analysis.js';

/**
 * The persona audit's gate checks: per (target, judge), the drift gap Δ
 * (filler − real) against `significantDrift` (its 95% CI above 0) and
 * `maxDrift`; a gap that could not be computed is a skipped check.
 */
export function personaGateChecks(report: PersonaReport, t: GateThresholds, runId: string): GateCheck[] {
  const checks: GateCheck[] = [];
  for (const d of report.drift) {
    const subject = `${d.target} (judge ${d.judge})`;
    const base = { run: runId, audit: 'persona' as const, subject };
    if ('error' in d.gap) {
      if (t.significantDrift || t.maxDrift !== null) {
        checks.push({ ...base, name: 'drift', status: 'skipped', message: `drift gap not computable: ${d.gap.error}` });
      }
      continue;
    }
    const { estimate, ci } = d.gap;
    const stated = `Δ = ${gateSigned(estimate)} [95% CI ${gateSigned(ci[0])}, ${gateSigned(ci[1])}]`;
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
        message: `${stated} ${fail ? 'is above' : 'is within'} the limit ${gateNumber(t.maxDrift)}`,
      });
    }
  }
  return checks;
}
