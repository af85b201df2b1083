import { gateNumber, gateSigned } from '../gate/format.js';
import { type GatedEffect, twoThresholdGate } from '../gate/two-threshold.js';
import type { PersonaReport } from './analysis.js';
import { personaGateShape } from './config.js';

/**
 * The persona audit's gate checks: per (target, judge), the drift gap Δ
 * (filler − real) against `significantDrift` (its 95% CI above 0) and
 * `maxDrift`; a gap that could not be computed is a skipped check.
 */
function personaEffects(report: PersonaReport): GatedEffect[] {
  return report.drift.map((d) => {
    const subject = `${d.target} (judge ${d.judge})`;
    if ('error' in d.gap) return { subject, notComputable: `drift gap not computable: ${d.gap.error}` };
    // The claim's interval: the test inverted, Holm-consistent across targets, so the gate agrees with the verdict.
    // A report stored before claims existed has none: its interval is the test's own.
    const { estimate } = d.gap;
    const claim = 'claim' in d.gap ? d.gap.claim : undefined;
    const ci = claim?.interval ?? d.gap.ci;
    const level = claim && claim.family > 1 ? `${Number((claim.confidence * 100).toFixed(2))}% CI, Holm over ${claim.family} targets` : '95% CI';
    const fragile = d.verdict?.fragile ? ` (fragile: driven by session ${d.verdict.drivenBy})` : '';
    const stated = `Δ = ${gateSigned(estimate)} [${level} ${gateSigned(ci[0])}, ${gateSigned(ci[1])}]${fragile}`;
    const significant = ci[0] > 0;
    const says = significant ? 'the register drops significantly in the real context' : 'no significant drift';
    return { subject, stated, significant, says, size: estimate, format: gateNumber };
  });
}

/** The persona audit's gate: its thresholds, their defaults and flags, and its checks. */
export const personaGate = twoThresholdGate({
  audit: 'persona',
  shape: personaGateShape,
  limit: {
    key: 'maxDrift',
    argument: 'delta',
    description: 'persona: fail when the drift gap Δ (filler − real) is above this, e.g. 0.3',
  },
  significant: {
    key: 'significantDrift',
    description: 'persona: do not fail on a significant drift gap (its 95% CI above 0)',
  },
  failsByDefault: 'significant drift',
  effects: personaEffects,
});

export const personaGateChecks = personaGate.checks;
