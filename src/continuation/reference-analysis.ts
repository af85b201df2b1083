import { type AnalysisOptions, analyzeContinuation, type ContinuationObservation, type ContinuationTargetAnalysis } from './analysis.js';
import type { ContinuationArm } from './arms.js';
import type { ReferenceCallScore } from './reference-fidelity.js';

/**
 * The continuation panel scored as the authors' code scores it (pure): per arm the tool-match
 * rate (their M1) and the mean argument similarity over matching calls (their M2), and the same
 * paired contrasts as the calibrated analysis with the authors' similarity as the fidelity of a
 * parseable call (a call to another tool scores 0, as in the calibrated analysis: their code
 * leaves it undefined and the paper's paired test needs a number). The calibrated analysis
 * stays the verdict; this block is for comparison with the paper (docs/replication.md (DriftLens section)).
 */

export interface ReferenceObservation extends ContinuationObservation {
  reference: ReferenceCallScore;
}

export interface ReferenceArmSummary {
  arm: ContinuationArm;
  generated: number;
  /** First calls naming the recorded tool (M1), and their share of the generated cells. */
  toolMatches: number;
  toolMatchRate: number | null;
  /** Mean jaccard_args over the matching calls (M2), null without one. */
  argSimilarity: number | null;
}

export interface ReferenceTargetAnalysis {
  target: string;
  arms: ReferenceArmSummary[];
  /** The calibrated analysis's contrasts, computed on the authors' fidelity. */
  analysis: ContinuationTargetAnalysis;
}

export interface ReferenceContinuation {
  procedure: 'reference';
  scoring: string;
  verdict: 'calibrated';
  targets: ReferenceTargetAnalysis[];
}

export const REFERENCE_SCORING =
  "tool match = the first call names the recorded tool; fidelity of a matching call = jaccard_args over its arguments (the authors' e07 scoring); another tool = 0";

/** The authors' fidelity of one observation: their similarity for a matching parseable call, 0 for another tool. */
function referenceFidelity(o: ReferenceObservation): number | null {
  if (o.status !== 'call') return o.fidelity;
  return o.reference.toolMatch ? (o.reference.argSimilarity ?? 0) : 0;
}

export function analyzeReferenceContinuation(observations: readonly ReferenceObservation[], options: AnalysisOptions = {}): ReferenceContinuation {
  const rescored = observations.map((o) => ({ ...o, fidelity: referenceFidelity(o) }));
  const analysis = analyzeContinuation(rescored, options);
  return {
    procedure: 'reference',
    scoring: REFERENCE_SCORING,
    verdict: 'calibrated',
    targets: analysis.targets.map((t) => {
      const mine = observations.filter((o) => o.target === t.target);
      return {
        target: t.target,
        analysis: t,
        arms: t.attrition.map(({ arm }): ReferenceArmSummary => {
          const generated = mine.filter((o) => o.arm === arm && o.generated);
          const matched = generated.filter((o) => o.reference.toolMatch && o.reference.argSimilarity !== null);
          return {
            arm,
            generated: generated.length,
            toolMatches: generated.filter((o) => o.reference.toolMatch).length,
            toolMatchRate: generated.length === 0 ? null : generated.filter((o) => o.reference.toolMatch).length / generated.length,
            argSimilarity: matched.length === 0 ? null : matched.reduce((s, o) => s + (o.reference.argSimilarity as number), 0) / matched.length,
          };
        }),
      };
    }),
  };
}
