import type { ContentPositionContrast } from './analysis-content-position.js';
import type { AnalysisExtras, ExtraOptions } from './analysis-extras.js';
import type {
  AnalysisDesign,
  CompactionResult,
  ContractContrast,
  DesignContrast,
  ItemCellResult,
  JudgeAgreementResult,
  MitigationResult,
  ScratchResult,
  StressorContrast,
  StressorResult,
  Surface,
  TargetDrift,
  VerbosityResult,
  Verdict,
} from './analysis-types.js';
import type { Maybe } from '../core/maybe.js';
import type { FingerprintPatterns } from './fingerprint.js';
import type { ReferenceBlock } from './reference-types.js';
import type { PersonaUnits } from './units.js';

/**
 * The persona report and the analysis options: apart from analysis-types.ts because they gather
 * the rows of every part of the analysis (consensus, harness, framing, onset, the reference block),
 * whose modules import the base types; kept here, no module imports its own report back.
 */

export interface PersonaReport extends AnalysisExtras {
  schema: 'echolens.persona-report/1';
  /** Content conditions against scratch (calibrated; Holm across the panel and within target), when the run has them. */
  contentPosition?: ContentPositionContrast[];
  options: Required<Pick<AnalysisOptions, 'B' | 'seed' | 'strongThreshold' | 'tostMargin'>> & { primaryCategory: string | null };
  design: AnalysisDesign;
  /** One verdict per target × judge, in the headline cell. */
  verdicts: Verdict[];
  counts: {
    observations: number;
    byArm: Array<{ target: string; arm: string; mitigation: string; surface: Surface; done: number; empty: number; failed: number; dropoutRate: number }>;
    invalidJudgements: Array<{ judge: string; arm: string; mitigation: string; invalid: number; judged: number }>;
  };
  drift: TargetDrift[];
  /** Drift gaps in the other cells, distance contrasts and system-prompt contrasts. */
  contrasts: DesignContrast[];
  mitigations: MitigationResult[];
  stressors: StressorResult[];
  stressorContrasts: StressorContrast[];
  verbosity: VerbosityResult[];
  contracts: Array<
    ItemCellResult & {
      passRate: number;
      failures: Record<string, number>;
    }
  >;
  contractContrasts: ContractContrast[];
  compaction: CompactionResult[];
  /** The scratch arm (no context), analysed once per target: its answers do not depend on the session or position. */
  scratch: ScratchResult[];
  judgeAgreement: JudgeAgreementResult[];
  /** Forks merged into one unit and requests drawn per unit, from the run manifest (absent in runs planned before). */
  units?: PersonaUnits;
  fingerprint: Maybe<{
    features: readonly string[];
    components: [number[], number[]];
    explainedVarianceRatio: [number, number];
    centroids: Array<{ arm: string; mitigation: string; pc1: number; pc2: number; n: number }>;
    /** One per response; `target` tells targets apart on the chart. */
    points: Array<{ target: string; arm: string; mitigation: string; pc1: number; pc2: number }>;
  }> | null;
  /** The authors' own estimators (runs with `procedure: reference`); reported beside, never the verdict. */
  reference?: ReferenceBlock;
}

export interface AnalysisOptions extends ExtraOptions {
  /** Monte Carlo patterns of sign-flip tests that are not exact (at least 20,000 are used). */
  B?: number;
  seed?: number;
  /** |Δ| at or above this is strong drift (paper: 0.30). */
  strongThreshold?: number;
  /** Equivalence margin of the compaction TOST (paper: ±0.08). */
  tostMargin?: number;
  /** The headline probe category (paper's primary battery: coding_self); null = all categories pooled (named `all`). */
  primaryCategory?: string | null;
  /** The fingerprint's word patterns (default: echolens's; the authors' when a run used their materials). */
  fingerprintPatterns?: FingerprintPatterns;
  /** The headline system prompt (default: the first in `systemPrompts`, else the first name in sort order). */
  primarySystemPrompt?: string;
  /** The headline distance (default: the first in `distances`, else the one the filler arm has). */
  primaryDistance?: string;
  /** Configured system prompts, in config order (fixes the primary one). */
  systemPrompts?: readonly string[];
  /** Configured distance names, in config order. */
  distances?: readonly string[];
  alpha?: number;
  /** `reference` adds the authors' estimators as the report's `reference` block. */
  procedure?: 'echolens' | 'reference';
  /** Unusable judgements in the reference block's plotted means: `keep` as −1 (the authors' figures) or `drop`. */
  referenceMinusOne?: 'keep' | 'drop';
}
