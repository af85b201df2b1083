import type { Claim } from './inference.js';

/**
 * What every surface prints of a claim (pure): the interval and the p that decide it (issue #39,
 * "one interval and one p per claim"). In a Holm family that is the Holm p and the Holm-consistent
 * interval, at a confidence above 95%, which the label states; alone, the test's own p and its
 * inverted 95% interval. Renderers read these rather than an estimate's `ci` and `p`, which are
 * the test alone and disagree with a Holm-adjusted p.
 */

/** The claim's confidence as a percentage label: `95%`, or `98.33%` at a Holm step. */
export const confidenceLabel = (claim: Pick<Claim, 'confidence'>): string => `${Number((claim.confidence * 100).toFixed(2))}%`;

/** ` (98.33% CI, Holm-consistent)` when the interval is not a plain 95% one, else empty. */
export const confidenceNote = (claim: Pick<Claim, 'confidence' | 'family'>): string =>
  claim.family > 1
    ? ` (${confidenceLabel(claim)} CI, Holm-consistent over ${claim.family})`
    : Math.abs(claim.confidence - 0.95) > 1e-9
      ? ` (${confidenceLabel(claim)} CI)`
      : '';

/** The interval a surface prints for an estimate that carries a claim. */
export const claimInterval = (estimate: { claim: Pick<Claim, 'interval'> }): readonly [number, number] => estimate.claim.interval;

/** The p a surface prints for an estimate that carries a claim (Holm-adjusted in a family). */
export const claimP = (estimate: { claim: Pick<Claim, 'p'> }): number => estimate.claim.p;
