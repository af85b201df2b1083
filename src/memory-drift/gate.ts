import { gatePercent } from '../gate/format.js';
import { type GatedEffect, twoThresholdGate } from '../gate/two-threshold.js';
import type { MemoryReport } from './analysis.js';
import { memoryGateShape } from './config.js';

/**
 * The memory audit's gate checks: per target, the DTW elevation of the persona
 * and life-event tiers over the no-memory floor against `significantElevation`
 * (p < α and above 0) and `maxElevation`; an elevation that could not be
 * computed is a skipped check.
 */
const GATED_TIERS = ['persona', 'life_event'] as const;

function memoryEffects(report: MemoryReport): GatedEffect[] {
  const alpha = report.options.alpha;
  return report.targets.flatMap((target) =>
    GATED_TIERS.flatMap((part): GatedEffect[] => {
      const tier = target.metrics.dtw.tiers.find((x) => x.tier === part);
      if (!tier) return [];
      const subject = target.target;
      if ('error' in tier.elevation) return [{ subject, part, notComputable: `${part} DTW elevation not computable: ${tier.elevation.error}` }];
      const e = tier.elevation;
      // The tier's claim (a family of one): the bootstrap test's p and that test inverted at α.
      const [lo, hi] = e.claim.interval;
      const level = Number((100 * e.claim.confidence).toFixed(2));
      const stated = `${part} DTW elevation ${gatePercent(e.estimate)} [${level}% CI ${gatePercent(lo)}, ${gatePercent(hi)}], p = ${e.claim.p.toFixed(4)}`;
      const significant = e.claim.p < alpha && e.estimate > 0;
      return [
        { subject, part, stated, significant, says: significant ? `significant at α = ${alpha}` : 'not significant', size: e.estimate, format: gatePercent },
      ];
    }),
  );
}

/** The memory audit's gate: its thresholds, their defaults and flags, and its checks. */
export const memoryGate = twoThresholdGate({
  audit: 'memory',
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
  effects: memoryEffects,
});

export const memoryGateChecks = memoryGate.checks;
