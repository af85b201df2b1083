import { quantileLinear } from '../stats/resampling-common.js';
import { holm } from '../stats/multiple-testing.js';
import { rng } from '../stats/rng.js';
import type { PersonaObservation } from './analysis-types.js';
import type { ReferenceCategoryGap, ReferenceCategoryPanel, ReferencePermutation, ReferenceTrajectory } from './reference-types.js';
import { getOrInsert } from '../core/get-or-insert.js';

/**
 * The rest of the ContextEcho authors' estimators under `procedure: reference` (pure), beside the
 * forest figure's in reference-analysis.ts:
 *
 * - per-category Δ (their probe-taxonomy figure): per target, each arm's mean of position means over
 *   the positions *that arm* has scores at, restricted to the category's probes; Δ = filler − real.
 *   The arms need not cover the same positions, and one position is enough (no interval is drawn);
 * - the panel row of that figure: the mean of the per-category Δ over the "drifters", the targets
 *   whose coding_self Δ has |Δ| ≥ the strong threshold (0.30);
 * - the trajectory (their Fig. 1b): per position where both arms have a score, each arm's mean over
 *   all probes with a non-blank response, a one-stage bootstrap of that mean (B, seed), and the gap
 *   as the difference of the two arms' means of those position means;
 * - Holm families (their consolidation script): the headline filler − real test of every target is
 *   one family (Holm across targets); every content-position contrast against scratch is adjusted
 *   within its target and across the panel (all targets × conditions).
 *
 * `minusOne: 'keep'` reproduces their plotting scripts, which keep any integer score: an unusable
 * judgement (stored as −1 by their judge parser) enters those means as −1. `drop` leaves it out, as
 * echolens's own statistics and the authors' consolidation script (scores 0–3 only) do.
 */

export type MinusOne = 'keep' | 'drop';

/** The score the authors' plotting scripts read for one observation, or null when they skip it. */
export function plottedScore(o: PersonaObservation, judge: string, minusOne: MinusOne): number | null {
  if (!(judge in o.scores)) return null;
  const score = o.scores[judge];
  if (typeof score === 'number') return score;
  return minusOne === 'keep' ? -1 : null;
}

import { mean } from '../stats/distributions.js';

/** Scores grouped by (session, position) in first-seen order; positions without a score are absent. */
export function groupByPosition(observations: readonly PersonaObservation[], judge: string, minusOne: MinusOne): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const o of observations) {
    const score = plottedScore(o, judge, minusOne);
    if (score !== null) getOrInsert(out, `${o.session}\u0000${o.position}`, () => []).push(score);
  }
  return out;
}

/** Mean of position means over the positions a grouping has; null with none. */
function clusterMean(groups: Map<string, number[]>): number | null {
  if (groups.size === 0) return null;
  return mean([...groups.values()].map(mean));
}

/**
 * Per-category Δ per target (each arm over its own positions) and the panel means over the
 * drifters. `probes` are the headline-cell probe observations of every target (all categories).
 */
export function referenceCategories(
  probes: readonly PersonaObservation[],
  targets: readonly string[],
  judge: string,
  options: { minusOne: MinusOne; strongThreshold: number; drifterCategory: string },
): { byCategory: ReferenceCategoryGap[]; categoryPanel: ReferenceCategoryPanel[] } {
  const categories = [...new Set(probes.map((o) => o.category))].sort();
  const byCategory: ReferenceCategoryGap[] = [];
  for (const target of targets) {
    for (const category of categories) {
      const mine = probes.filter((o) => o.target === target && o.category === category);
      const ofArm = (arm: string) => mine.filter((o) => o.arm === arm);
      const real = groupByPosition(ofArm('real'), judge, options.minusOne);
      const filler = groupByPosition(ofArm('filler'), judge, options.minusOne);
      const realMean = clusterMean(real);
      const fillerMean = clusterMean(filler);
      if (realMean === null || fillerMean === null) continue;
      byCategory.push({
        target,
        category,
        real: realMean,
        filler: fillerMean,
        estimate: fillerMean - realMean,
        positions: { real: real.size, filler: filler.size },
      });
    }
  }
  const drifters = targets.filter((t) => {
    const row = byCategory.find((r) => r.target === t && r.category === options.drifterCategory);
    return row !== undefined && Math.abs(row.estimate) >= options.strongThreshold;
  });
  const categoryPanel: ReferenceCategoryPanel[] = [];
  for (const category of categories) {
    const gaps = drifters.map((t) => byCategory.find((r) => r.target === t && r.category === category)).filter((r) => r !== undefined);
    if (gaps.length === 0) continue;
    categoryPanel.push({ category, estimate: mean(gaps.map((r) => r.estimate)), drifters: gaps.map((r) => r.target) });
  }
  return { byCategory, categoryPanel };
}

/** One-stage percentile bootstrap of a mean (the trajectory figure's per-position band). */
function bootstrapMean(values: readonly number[], B: number, seed: number): [number, number] {
  const random = rng(seed);
  const n = values.length;
  const replicates = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[random.int(n)] as number;
    replicates[b] = sum / n;
  }
  return [quantileLinear(replicates, 0.025), quantileLinear(replicates, 0.975)];
}

/**
 * The trajectory per target: all probes of the headline cell (every category), responses that are
 * blank after trimming left out (the authors' figure skips them), positions where both arms have a
 * score, in counter order.
 */
export function referenceTrajectories(
  probes: readonly PersonaObservation[],
  targets: readonly string[],
  judge: string,
  options: { minusOne: MinusOne; B: number; seed: number },
): ReferenceTrajectory[] {
  const out: ReferenceTrajectory[] = [];
  for (const target of targets) {
    const mine = probes.filter((o) => o.target === target && o.text.trim() !== '');
    const positions = [...new Map(mine.map((o) => [`${o.session}\u0000${o.position}`, o])).values()].sort(
      (a, b) => a.session.localeCompare(b.session) || a.positionValue - b.positionValue || a.position.localeCompare(b.position),
    );
    const rows: ReferenceTrajectory['positions'] = [];
    for (const p of positions) {
      const at = mine.filter((o) => o.session === p.session && o.position === p.position);
      const scores = (arm: string) =>
        at
          .filter((o) => o.arm === arm)
          .map((o) => plottedScore(o, judge, options.minusOne))
          .filter((s): s is number => s !== null);
      const real = scores('real');
      const filler = scores('filler');
      if (real.length === 0 || filler.length === 0) continue;
      rows.push({
        session: p.session,
        position: p.position,
        positionValue: p.positionValue,
        real: { mean: mean(real), ci: bootstrapMean(real, options.B, options.seed), n: real.length },
        filler: { mean: mean(filler), ci: bootstrapMean(filler, options.B, options.seed), n: filler.length },
      });
    }
    if (rows.length === 0) continue;
    const real = mean(rows.map((r) => r.real.mean));
    const filler = mean(rows.map((r) => r.filler.mean));
    out.push({ target, real, filler, gap: filler - real, positions: rows });
  }
  return out;
}

/**
 * Holm families of the permutation rows, in place. `filler - real` rows form the headline family
 * (Holm across targets); rows against scratch (content-position conditions) are adjusted within
 * their target (`pHolmWithinTarget`) and across the panel (`pHolm`, the paper's panel-wide Holm).
 * Any other contrast is its own family within its target.
 */
export function holmFamilies(rows: ReferencePermutation[]): void {
  const adjust = (family: ReferencePermutation[], store: (row: ReferencePermutation, p: number, size: number) => void) => {
    if (family.length === 0) return;
    const adjusted = holm(family.map((r) => r.p));
    family.forEach((row, i) => {
      store(row, adjusted[i] as number, family.length);
    });
  };
  const headline = rows.filter((r) => r.contrast === 'filler - real');
  adjust(headline, (row, p, size) => {
    row.family = 'headline';
    row.pHolm = p;
    row.familySize = size;
  });
  const content = rows.filter((r) => r.contrast.endsWith(' - scratch'));
  adjust(content, (row, p, size) => {
    row.family = 'content-position-panel';
    row.pHolm = p;
    row.familySize = size;
  });
  for (const target of [...new Set(rows.map((r) => r.target))]) {
    adjust(
      content.filter((r) => r.target === target),
      (row, p) => {
        row.pHolmWithinTarget = p;
      },
    );
    adjust(
      rows.filter((r) => r.target === target && r.contrast !== 'filler - real' && !r.contrast.endsWith(' - scratch')),
      (row, p, size) => {
        row.family = 'within-target';
        row.pHolm = p;
        row.familySize = size;
      },
    );
  }
}
