import type { GateThresholds } from '../gate/config.js';
import type { GateCheck } from '../gate/evaluate.js';
import { gatePercent } from '../gate/format.js';
import type { MemoryReport } from './analysis.js';

/**
 * The memory audit's gate checks: per target, the DTW elevation of the persona
 * and life-event tiers over the no-memory floor against `significantElevation`
 * (p < α and above 0) and `maxElevation`; an elevation that could not be
 * computed is a skipped check.
 */
const GATED_TIERS = ['persona', 'life_event'] as const;

export function memoryGateChecks(report: MemoryReport, t: GateThresholds, runId: string): GateCheck[] {
  const checks: GateCheck[] = [];
  const alpha = report.options.alpha;
  for (const target of report.targets) {
    const base = { run: runId, audit: 'memory' as const, subject: target.target };
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
      const stated = `${tierName} DTW elevation ${gatePercent(e.estimate)} [95% CI ${gatePercent(e.ci[0])}, ${gatePercent(e.ci[1])}], p = ${e.p.toFixed(4)}`;
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
          message: `${stated} ${fail ? 'is above' : 'is within'} the limit ${gatePercent(t.maxElevation)}`,
        });
      }
    }
  }
  return checks;
}
