import { InvalidArgumentError } from '../core/errors.js';
import { minimumDetectableEffect, twoSidedTestPower } from '../stats/calibration.js';

/**
 * What a continuation design can detect (pure; docs/continuation.md, "Power"). The primary
 * contrast is a paired mean over cutpoints, so its minimum detectable |Δ| at 80% power is
 * (t₁₋α/₂ + t₀.₈) · SD / √n with n − 1 degrees of freedom. Before a run the SD of the paired
 * differences is a planning value; after it, the run's own standard error is used.
 */

/** |Δ| of argument fidelity worth detecting when the config names none. */
export const DEFAULT_EFFECT_OF_INTEREST = 0.15;
/**
 * Planning SD of paired fidelity differences when the config names none: the SD of the paired
 * ITT differences under the built-in simulation profiles (0.56; differences lie in [−1, 1]).
 * A pilot run's SD is better: `analysis.planningSd`.
 */
export const DEFAULT_PLANNING_SD = 0.55;

export interface PowerSettings {
  alpha?: number;
  effectOfInterest?: number;
  planningSd?: number;
}

/** Minimum detectable |Δ| at 80% power for a paired mean over `n` cutpoints with SD `sd` (null below 2). */
export function designMde(n: number, sd: number, alpha = 0.05): number | null {
  if (!(sd > 0) || !Number.isFinite(sd)) throw new InvalidArgumentError('planningSd', `must be a positive number, got ${sd}`);
  if (!Number.isInteger(n) || n < 2) return null;
  return minimumDetectableEffect(sd / Math.sqrt(n), { alpha, df: n - 1 });
}

/** Power of the paired test over `n` cutpoints with SD `sd` against a true |Δ| of `effect` (null below 2). */
export function designPower(n: number, sd: number, effect: number, alpha = 0.05): number | null {
  if (!(sd > 0) || !Number.isFinite(sd)) throw new InvalidArgumentError('planningSd', `must be a positive number, got ${sd}`);
  if (!Number.isInteger(n) || n < 2) return null;
  return twoSidedTestPower(effect, sd / Math.sqrt(n), n - 1, alpha);
}

/** The fewest cutpoints whose design MDE is at most `effect` (capped at 100,000). */
export function cutpointsNeeded(effect: number, sd: number, alpha = 0.05): number | null {
  if (!(effect > 0)) throw new InvalidArgumentError('effectOfInterest', `must be a positive number, got ${effect}`);
  let lo = 2;
  let hi = 100_000;
  if ((designMde(hi, sd, alpha) as number) > effect) return null;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if ((designMde(mid, sd, alpha) as number) <= effect) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The line printed before spending (dry run and run start). */
export function designPowerLine(cutpoints: number, settings: PowerSettings = {}): string {
  const alpha = settings.alpha ?? 0.05;
  const sd = settings.planningSd ?? DEFAULT_PLANNING_SD;
  const effect = settings.effectOfInterest ?? DEFAULT_EFFECT_OF_INTEREST;
  const mde = designMde(cutpoints, sd, alpha);
  const assumed = `paired SD ${sd}${settings.planningSd === undefined ? ' assumed (set analysis.planningSd from a pilot)' : ''}`;
  if (mde === null) return `power: ${cutpoints} cutpoint(s) cannot support a paired test; use at least 6`;
  const power = designPower(cutpoints, sd, effect, alpha) as number;
  const head = `power: ${cutpoints} cutpoints → minimum detectable |Δ| fidelity ≈ ${mde.toFixed(2)} at 80% power, power ${power.toFixed(2)} at |Δ| = ${effect} (the effect of interest), α = ${alpha} (recent − cross, ITT; ${assumed})`;
  if (mde <= effect) return `${head}; adequately powered`;
  const needed = cutpointsNeeded(effect, sd, alpha);
  return `${head}; UNDERPOWERED${needed === null ? '' : ` — about ${needed} cutpoints would detect it`}`;
}

/** After a run: the MDE from the estimate's own standard error, and whether it exceeds the effect of interest. */
export function observedPower(
  estimate: { n: number; standardError: number | null },
  settings: PowerSettings = {},
): { mde: number | null; effectOfInterest: number; underpowered: boolean | null } {
  const effectOfInterest = settings.effectOfInterest ?? DEFAULT_EFFECT_OF_INTEREST;
  if (estimate.standardError === null || estimate.n < 2) return { mde: null, effectOfInterest, underpowered: null };
  const mde = minimumDetectableEffect(estimate.standardError, { alpha: settings.alpha ?? 0.05, df: estimate.n - 1 });
  return { mde, effectOfInterest, underpowered: mde > effectOfInterest };
}
