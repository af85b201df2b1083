import type { PersonaInference, PersonaObservation, ResolvedOptions } from './analysis-types.js';
import { type AnchorAblationRow, analyzeAnchorAblation } from './anchor-ablation-analysis.js';
import { analyzeConsensus, type ConsensusResult, type ConsensusRow } from './consensus.js';
import { analyzeFraming, atFraming, type FramingRow, hasFramingFactor } from './framing.js';
import { analyzeHarness, type HarnessOptions, type HarnessRow } from './harness.js';
import { type OnsetRow, onsetRows } from './onset.js';

/**
 * The report sections of the papers' further analyses (ContextEcho F6, App. F/G, N, S), pure: each
 * section lives in its own module; this one resolves what they share and puts them under their
 * keys of `PersonaReport` (docs/persona-report-schema.md).
 */

/** `harnesses`: the harness of each session id, for the harness contrast. */
export interface ExtraOptions extends HarnessOptions {
  /** Configured probe framing levels in config order (the first is the headline); default `[true]`. */
  framing?: readonly boolean[];
}

export interface AnalysisExtras {
  /** Pooled multi-judge consensus per target (runs with several judges). */
  consensus: ConsensusRow[];
  /** Targets with several judges but no consensus row, and why. */
  consensusSkipped: ConsensusResult['skipped'];
  /** Claude Code versus Codex sessions (runs with both). */
  harness: HarnessRow[];
  /** Probe framing on versus off (runs with `framing: [on, off]`). */
  framing: FramingRow[];
  /** The onset per target × judge, with its rule and, when undefined, why. */
  onset: OnsetRow[];
  /** Each cell of the anchor-ablation grid against the control (runs with `anchorAblation`). */
  anchorAblation: AnchorAblationRow[];
}

/** The headline framing level (first configured, else framed). */
export function headlineFraming(options: ExtraOptions): boolean {
  return options.framing?.[0] ?? true;
}

/** The observations the headline analysis uses: the headline framing level when the run has both. */
export function headlineObservations(observations: readonly PersonaObservation[], options: ExtraOptions): readonly PersonaObservation[] {
  return hasFramingFactor(observations) ? atFraming(observations, headlineFraming(options)) : observations;
}

export function analyzeExtras(
  all: readonly PersonaObservation[],
  headline: readonly PersonaObservation[],
  inference: PersonaInference,
  resolved: ResolvedOptions,
  options: ExtraOptions,
): AnalysisExtras {
  const consensus = analyzeConsensus(headline, inference.design, resolved);
  return {
    consensus: consensus.rows,
    consensusSkipped: consensus.skipped,
    harness: analyzeHarness(headline, inference.design, resolved, { ...(options.harnesses ? { harnesses: options.harnesses } : {}) }),
    framing: analyzeFraming(all, inference.design, resolved),
    onset: onsetRows(inference.drift, resolved),
    anchorAblation: analyzeAnchorAblation(headline, inference.design, resolved),
  };
}
