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
  pHolm: number;
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
  contracts: ReferenceContract[];
  /** Statistics the block could not compute, with the reason. */
  notComputed: Array<{ target: string; what: string; error: string }>;
}
