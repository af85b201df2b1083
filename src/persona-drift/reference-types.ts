/**
 * The types of a persona report's `reference` block (reference-analysis.ts computes it), apart so
 * that the report's types (analysis-types.ts) can name them without importing the computation.
 */

export interface ReferenceArm {
  target: string;
  /** `real` (the authors' `claude_session`), `filler`, or another context arm as named in the run. */
  arm: string;
  mean: number;
  ci: [number, number];
  positions: number;
  n: number;
}

export interface ReferenceGap {
  target: string;
  estimate: number;
  ci: [number, number];
}

export interface ReferencePermutation {
  target: string;
  /** `<comparison> - <baseline>`, e.g. `filler - real` or `recent3K - scratch`. */
  contrast: string;
  mean: number;
  p: number;
  /** Holm-adjusted p within `family` (the paper's family for this contrast). */
  pHolm: number;
  /**
   * Which Holm family `pHolm` belongs to: `headline` = the filler − real tests of every target
   * (Holm across targets); `content-position-panel` = every content-position contrast against
   * scratch across the panel (all targets × conditions, the paper's panel-wide Holm);
   * `within-target` = any other contrast, within its target.
   */
  family: 'headline' | 'content-position-panel' | 'within-target';
  /** Number of tests in `family`. */
  familySize: number;
  /** For content-position contrasts: Holm within the target's conditions (the authors' `p_holm_within`). */
  pHolmWithinTarget?: number;
}

/** Per-category Δ of one target as the authors' taxonomy figure: each arm over its own positions. */
export interface ReferenceCategoryGap {
  target: string;
  category: string;
  real: number;
  filler: number;
  /** filler − real (means of position means). */
  estimate: number;
  positions: { real: number; filler: number };
}

/** The taxonomy figure's row: the mean per-category Δ over the drifters (|coding_self Δ| ≥ 0.30). */
export interface ReferenceCategoryPanel {
  category: string;
  estimate: number;
  drifters: string[];
}

/** The trajectory figure (Fig. 1b) of one target: per-position arm means over all probes. */
export interface ReferenceTrajectory {
  target: string;
  /** Mean over the listed positions of each arm's position mean, and their difference. */
  real: number;
  filler: number;
  gap: number;
  positions: Array<{
    session: string;
    position: string;
    positionValue: number;
    real: { mean: number; ci: [number, number]; n: number };
    filler: { mean: number; ci: [number, number]; n: number };
  }>;
}

/** The authors' S2 compliance audit: per target (session null) or per session with targets pooled (target null). */
export interface ReferenceCompliance {
  target: string | null;
  session: string | null;
  /** (position, paraphrase) pairs with both arms. */
  pairs: number;
  real: { pass: number; n: number; rate: number };
  filler: { pass: number; n: number; rate: number };
  /** filler − real compliance, percentage points. */
  gapPp: number;
  /** Σ real length / Σ filler length over pairs with both lengths > 0. */
  rawRatio: number | null;
  rawPairs: number;
  /** mean real / mean filler length over those pairs where both comply. */
  conditionalRatio: number | null;
  conditionalPairs: number;
}

/** One anchor variant at one target × position (the authors' anchor-variant and full-trajectory analyses). */
export interface ReferenceAnchorVariant {
  variant: string;
  target: string;
  session: string;
  position: string;
  ratioNoAnchor: number;
  ratioWithAnchor: number;
  attenuationPct: number;
  n: { real: number; filler: number; anchored: number };
}

export interface ReferenceAnchorVariantSummary {
  variant: string;
  cells: number;
  meanAttenuationPct: number;
  /** Cells with attenuation ≥ 50 %. */
  wins: number;
  /** Cells with attenuation < 0 %. */
  failures: number;
}

export interface ReferenceContract {
  target: string;
  item: string;
  contrast: string;
  systemPrompt: string;
  distance: string;
  sessions: number;
  mean: number;
  ci: [number, number];
  p: number;
  pHolm: number;
}

export interface ReferenceBlock {
  procedure: 'contextecho';
  /** The judge whose scores the block uses (the first in name order when a run has several). */
  judge: string | null;
  /** Probe category of `arms` and `gap` (the authors' body figures: coding_self). */
  category: string;
  B: number;
  seed: number;
  arms: ReferenceArm[];
  gap: ReferenceGap[];
  permutation: ReferencePermutation[];
  /** Per-category Δ per target, and the panel mean over the drifters (the taxonomy figure). */
  byCategory: ReferenceCategoryGap[];
  categoryPanel: ReferenceCategoryPanel[];
  /** Per-position arm means over all probes (the trajectory figure). */
  trajectory: ReferenceTrajectory[];
  /** Whether unusable judgements (the authors' −1) enter the plotted means as −1 (`keep`) or not. */
  minusOne: 'keep' | 'drop';
  /** S2 compliance and length ratios on the stressor cells (the authors' cross-compaction audit). */
  compliance: ReferenceCompliance[];
  /** Anchor variants against the no-anchor cells, per cell and per variant. */
  anchorVariants: ReferenceAnchorVariant[];
  anchorVariantSummary: ReferenceAnchorVariantSummary[];
  contracts: ReferenceContract[];
  /** Statistics the block could not compute, with the reason. */
  notComputed: Array<{ target: string; what: string; error: string }>;
}
