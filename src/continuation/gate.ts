import { gateNumber, gateSigned } from '../gate/format.js';
import { type GatedEffect, twoThresholdGate } from '../gate/two-threshold.js';
import { continuationGateShape } from './config.js';
import type { ContinuationReport } from './run.js';

/**
 * The continuation audit's gate checks: per target, the primary contrast
 * (recent − cross) of argument fidelity, intention-to-treat (an unparseable,
 * prose or missing call scores 0, so a context that stops the agent from
 * calling a tool counts). `significantActionChange` fails a sign-flip p below
 * the analysis α in either direction (the question is whether the session
 * changes what the agent does next, not only whether it helps);
 * `maxActionChange` fails an absolute difference above the limit. A
 * difference that could not be computed is a skipped check (docs/decisions.md).
 */
/** "No significant change", and whether the run could have seen one (docs/continuation.md, "Power"). */
function noChange(power: { mde: number | null; effectOfInterest: number; underpowered: boolean | null } | undefined): string {
  if (!power?.underpowered || power.mde === null) return 'no significant change';
  return `no significant change, but the run is underpowered: it detects only |Δ| ≥ ${power.mde.toFixed(2)} (effect of interest ${power.effectOfInterest})`;
}

function continuationEffects(report: ContinuationReport): GatedEffect[] {
  const { a, b } = report.analysis.primary;
  const alpha = report.analysis.alpha;
  return report.analysis.targets.map((target) => {
    const subject = target.target;
    const itt = target.contrasts.find((c) => c.primary)?.itt;
    if (itt === undefined || itt.mean === null || itt.p === null) {
      const why = itt === undefined ? `the run has no ${a} and ${b} arms` : (itt.reason ?? 'no paired cutpoints');
      return { subject, notComputable: `${a} − ${b} fidelity difference not computable: ${why}` };
    }
    const interval = itt.ci ? ` [95% CI ${gateSigned(itt.ci[0])}, ${gateSigned(itt.ci[1])}]` : '';
    const stated = `${a} − ${b} argument fidelity (ITT) ${gateSigned(itt.mean)}${interval}, p = ${itt.p.toFixed(4)}, n = ${itt.n}`;
    const significant = itt.p < alpha;
    const says = significant ? `the session changes the next tool call significantly at α = ${alpha}` : noChange(target.power?.itt);
    return { subject, stated, significant, says, size: Math.abs(itt.mean), sizeStated: `${stated}: its size`, format: gateNumber };
  });
}

/** The continuation audit's gate: its thresholds, their defaults and flags, and its checks. */
export const continuationGate = twoThresholdGate({
  audit: 'continuation',
  shape: continuationGateShape,
  limit: {
    key: 'maxActionChange',
    argument: 'delta',
    description: 'continuation: fail when the recent − cross fidelity difference (ITT) is above this in size, e.g. 0.2',
  },
  significant: {
    key: 'significantActionChange',
    description: 'continuation: do not fail on a significant recent − cross fidelity difference',
  },
  failsByDefault: 'a significant action change',
  effects: continuationEffects,
});

export const continuationGateChecks = continuationGate.checks;
/** The continuation audit's thresholds (keys of a `gate:` section, documented on its gate shape). */
export type ContinuationGateThresholds = Parameters<typeof continuationGateChecks>[1];
