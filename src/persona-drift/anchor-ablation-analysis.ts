import type { AnalysisDesign, GapEstimate, Maybe, PersonaObservation, ResolvedOptions } from './analysis-types.js';
import { meanValue, probeCell } from './analysis-effects.js';
import { isAblationLabel } from './anchor-ablation.js';
import { cellContrast, cellName, inCell, judgeTargets } from './contrasts.js';

/**
 * Anchor ablations (ContextEcho App. F/G), the analysis part, pure: every cell of the
 * `anchorAblation` grid against the unmitigated real-context control at the same prompt and
 * distance (per-unit difference, clustered inference as everywhere), with the share of the drift
 * gap it recovers. The three charts read these rows: score change by anchor size, by turns since
 * the anchor, and by placement (docs/statistics.md "Anchor ablations").
 */

export interface AnchorAblationRow {
  target: string;
  judge: string;
  /** The cell's `mitigation` label. */
  label: string;
  arm: string;
  size: number | null;
  tokens: number;
  placement: string;
  turns: number;
  cell: string;
  mean: number;
  n: number;
  /** ablation cell − control (real context, no intervention). */
  vsControl: Maybe<GapEstimate>;
  /** (ablation − control)/(filler − control), only when filler − control > 0.05. */
  recovery: number | null;
}

export function analyzeAnchorAblation(observations: readonly PersonaObservation[], design: AnalysisDesign, options: ResolvedOptions): AnchorAblationRow[] {
  const labels = design.mitigations.filter(isAblationLabel);
  if (labels.length === 0) return [];
  const inf = { B: options.B, seed: options.seed, alpha: options.alpha };
  const levels = new Map<string, NonNullable<PersonaObservation['anchor']>>();
  for (const o of observations) if (o.anchor && !levels.has(o.mitigation)) levels.set(o.mitigation, o.anchor);
  const rows: AnchorAblationRow[] = [];
  for (const [judge, target] of judgeTargets(design)) {
    const control = inCell(observations, probeCell(design, target, judge, 'real'));
    const controlMean = meanValue(control, judge);
    const fillerMean = meanValue(inCell(observations, probeCell(design, target, judge, 'filler')), judge);
    for (const label of labels) {
      const level = levels.get(label);
      if (!level) continue;
      const ref = probeCell(design, target, judge, 'real', { mitigation: label });
      const group = inCell(observations, ref);
      const mean = meanValue(group, judge);
      if (mean === null) continue;
      const headroom = controlMean !== null && fillerMean !== null ? fillerMean - controlMean : null;
      rows.push({
        target,
        judge,
        label,
        arm: level.arm,
        size: level.size,
        tokens: level.tokens,
        placement: level.placement,
        turns: level.turns,
        cell: cellName(ref),
        mean,
        n: group.length,
        vsControl: cellContrast(control, group, judge, inf),
        recovery: headroom !== null && headroom > 0.05 && controlMean !== null ? (mean - controlMean) / headroom : null,
      });
    }
  }
  return rows;
}
