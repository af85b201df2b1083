import type { AnalysisDesign, GapEstimate, Maybe, PersonaObservation, ResolvedOptions } from './analysis-types.js';
import { probeCell } from './analysis-effects.js';
import { cellContrast, cellName, combinationContrast, inCell, judgeTargets } from './contrasts.js';
import type { UnitInference } from './inference.js';

/**
 * Probe-framing ablation inside one run (ContextEcho App. S), pure. With `probes.framing: [on, off]`
 * every probe is sent framed and bare in the same cells; the headline keeps to the first listed
 * level (nothing is pooled across framing), and this section contrasts the two: the drift gap under
 * each framing, their difference per unit (does the framing create the drift?), and the framing's
 * shift of the real and filler arms separately (the paper: framing lowers the real-prefix score,
 * the filler − real contrast stays). Units and inference as everywhere (docs/statistics.md).
 */

export interface FramingRow {
  target: string;
  judge: string;
  cell: string;
  /** Drift gap Δ = filler − real with the framing. */
  framed: Maybe<GapEstimate>;
  /** Drift gap Δ with bare probes. */
  bare: Maybe<GapEstimate>;
  /** Δ bare − Δ framed, per unit, clustered inference. */
  difference: Maybe<UnitInference>;
  /** Real arm: framed − bare score (negative = the framing lowers the real-prefix score). */
  realShift: Maybe<GapEstimate>;
  /** Filler arm: framed − bare score. */
  fillerShift: Maybe<GapEstimate>;
}

/** Is this a probe observation at the given framing level? (absent `framed` = framed, the default). */
const atLevel = (o: PersonaObservation, framed: boolean) => o.surface !== 'probe' || (o.framed ?? true) === framed;

/** Does the run have both framing levels on the probe surface? */
export function hasFramingFactor(observations: readonly PersonaObservation[]): boolean {
  let on = false;
  let off = false;
  for (const o of observations) {
    if (o.surface !== 'probe') continue;
    if (o.framed === false) off = true;
    else on = true;
    if (on && off) return true;
  }
  return false;
}

/** The observations of the headline framing level (every non-probe observation is kept). */
export function atFraming(observations: readonly PersonaObservation[], framed: boolean): PersonaObservation[] {
  return observations.filter((o) => atLevel(o, framed));
}

export function analyzeFraming(observations: readonly PersonaObservation[], design: AnalysisDesign, options: ResolvedOptions): FramingRow[] {
  if (!hasFramingFactor(observations)) return [];
  const inf = { B: options.B, seed: options.seed, alpha: options.alpha };
  const framedObs = atFraming(observations, true);
  const bareObs = atFraming(observations, false);
  const rows: FramingRow[] = [];
  for (const [judge, target] of judgeTargets(design)) {
    const real = probeCell(design, target, judge, 'real');
    const filler = probeCell(design, target, judge, 'filler');
    const cells = {
      framedReal: inCell(framedObs, real),
      framedFiller: inCell(framedObs, filler),
      bareReal: inCell(bareObs, real),
      bareFiller: inCell(bareObs, filler),
    };
    if (cells.framedReal.length === 0 && cells.bareReal.length === 0) continue;
    rows.push({
      target,
      judge,
      cell: `${cellName(filler).replace(' arm=filler', '')} (filler − real), framed vs bare probes`,
      framed: cellContrast(cells.framedReal, cells.framedFiller, judge, inf),
      bare: cellContrast(cells.bareReal, cells.bareFiller, judge, inf),
      difference: combinationContrast(
        [
          { observations: cells.bareFiller, weight: 1 },
          { observations: cells.bareReal, weight: -1 },
          { observations: cells.framedFiller, weight: -1 },
          { observations: cells.framedReal, weight: 1 },
        ],
        judge,
        inf,
      ),
      realShift: cellContrast(cells.bareReal, cells.framedReal, judge, inf),
      fillerShift: cellContrast(cells.bareFiller, cells.framedFiller, judge, inf),
    });
  }
  return rows;
}
