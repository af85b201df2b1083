import { holm } from '../stats/multiple-testing.js';
import type { AnalysisDesign, GapEstimate, Maybe, PersonaObservation, ResolvedOptions } from './analysis-types.js';
import { itemContrast, promptOf, unitKey } from './contrasts.js';

/**
 * Content-position contrasts in echolens's calibrated procedure (pure): each content condition
 * (an arm that is none of echolens's own context arms, e.g. the authors' `recent3K`) against
 * `scratch`, per target × judge, at the positions where scratch was measured, probes as units
 * (every category, the headline prompt and distance, no mitigation). Multiplicity as the paper
 * names it: Holm across the panel (all targets × conditions of a judge) is `pHolm`, the family
 * stated in `family`; Holm within the target is `pHolmWithinTarget`. The verdicts do not use these
 * rows; docs/statistics.md ("Content-position contrasts").
 */

export interface ContentPositionContrast {
  target: string;
  judge: string;
  /** `<condition> - scratch`. */
  contrast: string;
  difference: Maybe<GapEstimate>;
  pHolm: number | null;
  pHolmWithinTarget: number | null;
  family: 'content-position-panel';
  familySize: number;
}

const OWN_ARMS = new Set(['real', 'filler', 'filler-flat', 'shuffled-real', 'unrelated-session', 'scratch']);

export function analyzeContentPosition(
  observations: readonly PersonaObservation[],
  design: AnalysisDesign,
  options: ResolvedOptions,
): ContentPositionContrast[] {
  if (!design.arms.includes('scratch')) return [];
  const conditions = design.arms.filter((arm) => !OWN_ARMS.has(arm));
  if (conditions.length === 0) return [];
  const inference = { B: options.B, seed: options.seed, alpha: options.alpha };
  const out: ContentPositionContrast[] = [];
  for (const judge of design.judges) {
    const rows: ContentPositionContrast[] = [];
    for (const target of design.targets) {
      const cell = observations.filter(
        (o) =>
          o.status === 'done' &&
          o.target === target &&
          o.surface === 'probe' &&
          o.mitigation === 'none' &&
          promptOf(o) === design.primarySystemPrompt &&
          o.distance === design.primaryDistance &&
          typeof o.scores[judge] === 'number',
      );
      const scratch = cell.filter((o) => o.arm === 'scratch');
      const at = new Set(scratch.map(unitKey));
      for (const condition of conditions) {
        const comparison = cell.filter((o) => o.arm === condition && at.has(unitKey(o)));
        if (comparison.length === 0) continue;
        rows.push({
          target,
          judge,
          contrast: `${condition} - scratch`,
          difference: itemContrast(scratch, comparison, judge, inference),
          pHolm: null,
          pHolmWithinTarget: null,
          family: 'content-position-panel',
          familySize: 0,
        });
      }
    }
    const tested = rows.filter((r) => !('error' in r.difference));
    const pOf = (r: ContentPositionContrast) => (r.difference as GapEstimate).p;
    if (tested.length > 0) {
      const panel = holm(tested.map(pOf));
      tested.forEach((r, i) => {
        r.pHolm = panel[i] as number;
        r.familySize = tested.length;
      });
      for (const target of new Set(tested.map((r) => r.target))) {
        const mine = tested.filter((r) => r.target === target);
        const within = holm(mine.map(pOf));
        mine.forEach((r, i) => {
          r.pHolmWithinTarget = within[i] as number;
        });
      }
    }
    out.push(...rows);
  }
  return out;
}
