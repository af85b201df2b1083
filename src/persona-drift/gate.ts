import type { GateCheck } from '../gate/types.js';
import { personaGateShape } from './config.js';
import { gateNumber, gateSigned, limitCheck } from '../gate/format.js';
import { type TwoThresholds, twoThresholdGate } from '../gate/two-threshold.js';
import type { PersonaReport } from './analysis.js';

/**
 * The persona audit's gate checks: per (target, judge), the drift gap Δ
 * (filler − real) against `significantDrift` (its 95% CI above 0) and
 * `maxDrift`; a gap that could not be computed is a skipped check.
 */
export function personaGateChecks(report: PersonaReport, t: PersonaGateThresholds, runId: string): GateCheck[] {
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
    // The claim's interval: the test inverted, Holm-consistent across targets, so the gate agrees with the verdict.
    // A report stored before claims existed has none: its interval is the test's own.
    const { estimate } = d.gap;
    const claim = 'claim' in d.gap ? d.gap.claim : undefined;
    const ci = claim?.interval ?? d.gap.ci;
    const level = claim && claim.family > 1 ? `${Number((claim.confidence * 100).toFixed(2))}% CI, Holm over ${claim.family} targets` : '95% CI';
    const fragile = d.verdict?.fragile ? ` (fragile: driven by session ${d.verdict.drivenBy})` : '';
    const stated = `Δ = ${gateSigned(estimate)} [${level} ${gateSigned(ci[0])}, ${gateSigned(ci[1])}]${fragile}`;
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
      checks.push(limitCheck(base, 'max-drift', estimate, t.maxDrift, stated, gateNumber));
    }
  }
  return checks;
}

/** The persona audit's thresholds (keys of a `gate:` section, documented on its gate shape). */
export type PersonaGateThresholds = TwoThresholds<'significantDrift', 'maxDrift'>;

/** The persona audit's gate: its thresholds, their defaults and flags, and its checks. */
export const personaGate = twoThresholdGate<PersonaReport, 'significantDrift', 'maxDrift'>({
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
  check: personaGateChecks,
});
