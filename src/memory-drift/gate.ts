import type { GateCheck } from '../gate/types.js';
import { memoryGateShape } from './config.js';
import { gatePercent, limitCheck } from '../gate/format.js';
import { type TwoThresholds, twoThresholdGate } from '../gate/two-threshold.js';
import type { MemoryReport } from './analysis.js';

/**
 * The memory audit's gate checks: per target, the DTW elevation of the persona
 * and life-event tiers over the no-memory floor against `significantElevation`
 * (p < α and above 0) and `maxElevation`; an elevation that could not be
 * computed is a skipped check.
 */
const GATED_TIERS = ['persona', 'life_event'] as const;

export function memoryGateChecks(report: MemoryReport, t: MemoryGateThresholds, runId: string): GateCheck[] {
  const checks: GateCheck[] = [];
  const alpha = report.options.alpha;
  for (const target of report.targets) {
    const base = { run: runId, audit: 'memory' as const, subject: target.target };
    for (const tierName of GATED_TIERS) {
      const tier = target.metrics.dtw.tiers.find((x) => x.tier === tierName);
      if (!tier) continue;
      if ('error' in tier.elevation) {
        if (t.significantElevation || t.maxElevation !== null) {
          checks.push({
            ...base,
            name: `elevation:${tierName}`,
            status: 'skipped',
            message: `${tierName} DTW elevation not computable: ${tier.elevation.error}`,
          });
        }
        continue;
      }
      const e = tier.elevation;
      // The tier's claim (a family of one): the bootstrap test's p and that test inverted at α.
      const [lo, hi] = e.claim.interval;
      const level = Number((100 * e.claim.confidence).toFixed(2));
      const stated = `${tierName} DTW elevation ${gatePercent(e.estimate)} [${level}% CI ${gatePercent(lo)}, ${gatePercent(hi)}], p = ${e.claim.p.toFixed(4)}`;
      if (t.significantElevation) {
        const fail = e.claim.p < alpha && e.estimate > 0;
        checks.push({
          ...base,
          name: `significant-elevation:${tierName}`,
          status: fail ? 'fail' : 'pass',
          message: `${stated}: ${fail ? `significant at α = ${alpha}` : 'not significant'}`,
        });
      }
      if (t.maxElevation !== null) {
        checks.push(limitCheck(base, `max-elevation:${tierName}`, e.estimate, t.maxElevation, stated, gatePercent));
      }
    }
  }
  return checks;
}

/** The memory audit's thresholds (keys of a `gate:` section, documented on its gate shape). */
export type MemoryGateThresholds = TwoThresholds<'significantElevation', 'maxElevation'>;

/** The memory audit's gate: its thresholds, their defaults and flags, and its checks. */
export const memoryGate = twoThresholdGate<MemoryReport, 'significantElevation', 'maxElevation'>({
  shape: memoryGateShape,
  limit: {
    key: 'maxElevation',
    argument: 'fraction',
    description: 'memory: fail when a persona or life-event tier’s DTW elevation is above this, e.g. 0.25 = +25%',
    format: (limit) => `${(100 * limit).toFixed(0)}%`,
  },
  significant: {
    key: 'significantElevation',
    description: 'memory: do not fail on a significant persona or life-event elevation',
  },
  failsByDefault: 'significant elevation',
  check: memoryGateChecks,
});
