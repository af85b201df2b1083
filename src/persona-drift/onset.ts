import { holm } from '../stats/multiple-testing.js';
import type { GapEstimate, Maybe, ResolvedOptions, TargetDrift } from './analysis-types.js';

/**
 * Onset (ContextEcho App. N), always reported, pure: for every target × judge the rule, the
 * onset position when the rule finds one, and otherwise the reason it is undefined — the
 * headline drift is not significant, too few positions were probed, a probe-level test cannot
 * reach the level with this many probes, or no position crosses. The rule is the one `drift[].onset`
 * applies (analysis-effects.ts); this row explains its outcome (docs/statistics.md "Onset").
 */

export interface OnsetRow {
  target: string;
  judge: string;
  rule: string;
  /** The onset position, or null with `reason`. */
  onset: { session: string; position: string; positionValue: number; estimate: number; pHolm: number } | null;
  /** Why the onset is undefined (null when it is defined). */
  reason: string | null;
  /** Positions with a probe-level test. */
  positionsTested: number;
  /** The smallest Holm-adjusted p over positions (null without tested positions). */
  smallestPHolm: number | null;
  /** The smallest p a probe-level sign-flip test can give at these positions. */
  minAttainableP: number | null;
}

export function onsetRule(options: Pick<ResolvedOptions, 'alpha' | 'strongThreshold'>): string {
  return (
    `the first position in counter order whose probe-level sign-flip test (probes as units) survives Holm across all positions at ${options.alpha}, ` +
    `with |Δ| ≥ ${options.strongThreshold} and the headline's sign; defined only when the headline drift is significant`
  );
}

const isGap = (g: Maybe<GapEstimate>): g is GapEstimate => !('error' in g);
const p3 = (p: number) => (p < 0.001 ? '<0.001' : p.toFixed(3));

export function onsetRows(drift: readonly TargetDrift[], options: Pick<ResolvedOptions, 'alpha' | 'strongThreshold'>): OnsetRow[] {
  const rule = onsetRule(options);
  return drift.map((d) => {
    const tested = d.byPosition.filter((p): p is typeof p & { gap: GapEstimate } => isGap(p.gap));
    const adjusted = tested.length > 0 ? holm(tested.map((p) => p.gap.p)) : [];
    const smallestPHolm = adjusted.length > 0 ? Math.min(...adjusted) : null;
    const minAttainableP = tested.length > 0 ? Math.min(...tested.map((p) => p.gap.minAttainableP)) : null;
    const base = { target: d.target, judge: d.judge, rule, positionsTested: tested.length, smallestPHolm, minAttainableP };
    if (d.onset) {
      const at = tested.find((p) => p.session === d.onset?.session && p.position === d.onset?.position);
      return { ...base, onset: { ...d.onset, estimate: at ? at.gap.estimate : Number.NaN }, reason: null };
    }
    return { ...base, onset: null, reason: undefinedReason(d, tested, smallestPHolm, minAttainableP, options) };
  });
}

function undefinedReason(
  d: TargetDrift,
  tested: ReadonlyArray<{ gap: GapEstimate }>,
  smallestPHolm: number | null,
  minAttainableP: number | null,
  options: Pick<ResolvedOptions, 'alpha' | 'strongThreshold'>,
): string {
  if (!isGap(d.gap)) return `the headline drift is not computable (${d.gap.error})`;
  if (d.verdict.kind !== 'drift') {
    return `the headline drift is not significant (${d.verdict.kind}); the onset is only looked for when it is, which keeps its family-wise error at the headline's`;
  }
  const untested = d.byPosition.filter((p) => !isGap(p.gap));
  if (tested.length === 0) {
    const why = untested[0] && !isGap(untested[0].gap) ? `: ${untested[0].gap.error}` : '';
    return `no position has a probe-level test${why}`;
  }
  if (tested.length < 2) return `too few positions: only ${tested.length} position has a probe-level test; an onset needs at least 2 positions to order`;
  if (minAttainableP !== null && minAttainableP >= options.alpha) {
    return `no position can cross: with this few probes per position the probe-level sign-flip test cannot reach p < ${options.alpha} (smallest possible p = ${minAttainableP.toPrecision(3)}); add probes, paraphrases or categories`;
  }
  return `no crossing: no position's probe-level test survives Holm across ${tested.length} positions with |Δ| ≥ ${options.strongThreshold} and the headline's sign (smallest Holm p = ${smallestPHolm === null ? 'n/a' : p3(smallestPHolm)})`;
}
