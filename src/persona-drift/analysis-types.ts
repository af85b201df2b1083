import type { Maybe } from '../core/maybe.js';
import type { AgreementResult } from '../stats/agreement.js';
import type { InferenceLevel, UnitInference } from './inference.js';

/**
 * The types of the persona analysis (analysis.ts and the modules it is split into:
 * analysis-effects.ts, analysis-design.ts, contrasts.ts). They live here so that those
 * modules import each other's types without a circle.
 */

export type Surface = 'probe' | 'stressor' | 'contract';

/** One target response with everything the analysis needs (built from the store). */
export interface PersonaObservation {
  target: string;
  session: string;
  /** Position label, e.g. `P03`, `pre-C2`, `post-C2`, `T0025`. */
  position: string;
  /** Counter value of the position (for ordering and onset). */
  positionValue: number;
  /** Compaction event this position brackets, with its side. */
  compaction?: { index: number; side: 'pre' | 'post' };
  /** Context arm: real, filler, filler-flat, shuffled-real, unrelated-session, scratch. */
  arm: string;
  /** Mitigation arm: none, a-anchor, v0, placebo_iso_recipe, … */
  mitigation: string;
  /** Distance label after an insertion (d0, far, …). */
  distance: string;
  /** The real continuation replayed after the position (distances > 0): timeline messages and why it was clipped. */
  continuation?: { messages: number; clipped: string | null };
  /** System prompt name the cell was sent with (absent in old runs: one prompt, `default`). */
  systemPrompt?: string;
  surface: Surface;
  /** Anchor-ablation cells: the grid levels (the `mitigation` label names the cell). */
  anchor?: { arm: string; size: number | null; tokens: number; placement: 'before-probe' | 'session-start' | 'both'; turns: number };
  /** Probe surface: whether the benchmark framing preceded the probe (absent = framed, the default). */
  framed?: boolean;
  /** Probe id, stressor id or contract id. */
  item: string;
  /** Probe category (probe surface) or the stressor/contract id. */
  category: string;
  paraphrase: number;
  sample: number;
  /** `done` responses are analysed; `empty` are dropouts; `failed` never answered. */
  status: 'done' | 'empty' | 'failed';
  text: string;
  /** Judge scores by judge model (probe surface); null = judge output invalid after re-asks. */
  scores: Record<string, number | null>;
  /** Deterministic check (stressor/contract surfaces). */
  check?: { pass: boolean; reason: string };
}

export interface Estimate {
  estimate: number;
  ci: readonly [number, number];
}

/** The shared Maybe (core/maybe.ts), re-exported under its old place. */
export type { Maybe };

/**
 * A contrast between two cells (comparison − baseline) with clustered inference. `real` is the
 * baseline cell's mean and `filler` the comparison cell's mean (names kept from the drift gap).
 */
export interface GapEstimate extends UnitInference {
  /** Positions (session, position pairs) with data in both cells. */
  nPositions: number;
  real: Estimate;
  filler: Estimate;
  nReal: number;
  nFiller: number;
  /** Holm-adjusted p within the row's family, where the report adjusts. */
  pHolm?: number;
}

export type VerdictKind = 'drift' | 'no detectable drift' | 'underpowered for this design' | 'not computable';

/** A result of one target's scores by one judge in one named cell (the headline cell for a verdict or drift row). */
interface JudgedCell {
  target: string;
  judge: string;
  cell: string;
}

export interface Verdict extends JudgedCell {
  kind: VerdictKind;
  /** One sentence with the numbers. */
  text: string;
  /** Minimum detectable |Δ| at 80% power for this design (normal approximation of the t interval); null when the test cannot reject. */
  mde: number | null;
  /** Set on a significant session-level verdict that removing one outlying session undoes (leave-one-session-out). */
  fragile?: boolean;
  /** The session a fragile verdict rests on. */
  drivenBy?: string;
}

/** `cell`: the headline cell, primary prompt, primary distance, no mitigation, primary category. */
export interface TargetDrift extends JudgedCell {
  /** Position-averaged gap Δ = filler − real, clustered at the sampled unit. */
  gap: Maybe<GapEstimate>;
  strongDrift: boolean;
  /** Sign-flip test of the unit-level deltas (positions, or sessions when there are several); Holm across targets per judge. */
  signFlip: Maybe<{ mean: number; p: number; n: number; pHolm: number; level: InferenceLevel; method: 'exact' | 'monte-carlo' }>;
  /** Per position: probes are the units (trajectory and onset). */
  byPosition: Array<{ session: string; position: string; positionValue: number; gap: Maybe<GapEstimate> }>;
  /** Same cell, other probe categories. */
  byCategory: Array<{ category: string; gap: Maybe<GapEstimate> }>;
  /** Per session: its positions are the units. */
  bySession: Array<{ session: string; gap: Maybe<GapEstimate> }>;
  /** Other context arms against filler: gap = filler − arm (scratch is in `scratch`). */
  referenceArms: Array<{ arm: string; gap: Maybe<GapEstimate> }>;
  /** First position (counter order) whose probe-level test survives Holm across positions; only when the headline is significant. */
  onset: { session: string; position: string; positionValue: number; pHolm: number } | null;
  verdict: Verdict;
}

export interface MitigationResult extends JudgedCell {
  mitigation: string;
  distance: string;
  systemPrompt: string;
  mean: number;
  n: number;
  /** mitigation − control (real context, no mitigation, same prompt and distance). */
  vsControl: Maybe<GapEstimate>;
  /** mitigation − placebo_iso_recipe at the same prompt and distance, when that arm exists. */
  vsPlacebo: Maybe<GapEstimate> | null;
  /** (mitigated − real)/(filler − real) at the same prompt and distance, only when filler − real > 0.05. */
  recovery: number | null;
}

/** A stressor or contract item of one target at one distance under one system prompt. */
interface ItemPlace {
  target: string;
  item: string;
  distance: string;
  systemPrompt: string;
}

/** One stressor or contract item of one target in one cell (arm, mitigation, distance, system prompt), over n answers. */
export interface ItemCellResult extends ItemPlace {
  arm: string;
  mitigation: string;
  n: number;
}

export interface StressorResult extends ItemCellResult {
  complianceRate: number;
  meanLength: number;
}

export interface VerbosityResult {
  target: string;
  item: string;
  cell: string;
  pairs: number;
  /** filler compliance − real compliance, percentage points. */
  complianceGapPp: number;
  medianRatio: number | null;
  /** Mean real length / mean filler length over pairs where both arms comply. */
  conditionalRatio: number | null;
  conditionalPairs: number;
  /** Between-session share of the log verbosity ratio (random-effects REML). */
  heterogeneity: Maybe<{ between: number; within: number; betweenShare: number }> | null;
  /** The same ratios per session (paper Table 1 and its conditional-on-compliance paragraph). */
  bySession: Array<{ session: string; pairs: number; medianRatio: number | null; conditionalRatio: number | null; conditionalPairs: number }>;
}

export interface ContractContrast extends ItemPlace {
  contrast: string;
  cell: string;
  sessions: number;
  /** Pass-rate difference per position, clustered like every other contrast. */
  difference: Maybe<GapEstimate>;
  signFlip: Maybe<{ p: number; level: InferenceLevel; units: number }>;
  pHolm: number | null;
}

export interface CompactionResult extends JudgedCell {
  events: Array<{ session: string; index: number; pre: number; post: number; change: number }>;
  meanChange: number | null;
  /** TOST over units: compaction events in one session, session means of events with several. */
  tost: Maybe<{
    mean: number;
    ci: [number, number];
    /** 95% t interval of the mean change (the TOST's own `ci` is the 90% one). */
    ci95: [number, number];
    p: number;
    equivalent: boolean;
    margin: number;
    level: 'event' | 'session';
    units: number;
  }> | null;
}

export interface JudgeAgreementResult {
  judgeA: string;
  judgeB: string;
  pairs: Maybe<AgreementResult>;
  signs: Maybe<{ agree: number; flip: number; nullVsSmall: number; labels: Array<{ target: string; gapA: number; gapB: number; label: string }> }>;
}

/** The analysis options with their defaults filled in (analysis.ts `resolveOptions`). */
export interface ResolvedOptions {
  B: number;
  seed: number;
  strongThreshold: number;
  tostMargin: number;
  alpha: number;
  primaryCategory: string | null;
}

/** The inferential part of the report (everything a calibration replicate needs). */
export interface PersonaInference {
  design: AnalysisDesign;
  verdicts: Verdict[];
  drift: TargetDrift[];
  contrasts: DesignContrast[];
  mitigations: MitigationResult[];
  stressorContrasts: StressorContrast[];
  contractContrasts: ContractContrast[];
  compaction: CompactionResult[];
  scratch: ScratchResult[];
}

/**
 * The design a run actually has (pure): the levels of every factor found in the observations
 * and the headline level of each. The analysis reads its cells from here; nothing is pooled
 * across a level that is not named.
 */
export interface AnalysisDesign {
  targets: string[];
  judges: string[];
  sessions: string[];
  systemPrompts: string[];
  arms: string[];
  mitigations: string[];
  distances: string[];
  /** Probe categories present (probe surface). */
  categories: string[];
  /** Distinct probed contexts (session, position) on the real arm. */
  positions: number;
  primarySystemPrompt: string;
  primaryDistance: string;
  /** The headline probe category, or `all` when the analysis was asked to pool categories. */
  primaryCategory: string;
  /** What each non-zero distance replayed at each position, e.g. "far = +61 messages, clipped at session end". */
  continuations: Array<{ session: string; position: string; distance: string; messages: number; clipped: string | null; text: string }>;
  /** What the headline rests on, in words. */
  headline: string;
}

export interface CellRef {
  target: string;
  /** Judge whose scores are analysed (probe surface); null for judge-free surfaces. */
  judge: string | null;
  systemPrompt: string;
  arm: string;
  mitigation: string;
  distance: string;
  surface: PersonaObservation['surface'];
  /** Probe category (probe surface; `all` when the analysis pools categories on request) or the stressor/contract id. */
  category: string;
}

export interface DesignContrast {
  /** drift: filler − real in a non-headline cell; distance: real at a distance − real at the headline distance; prompt: gap under a prompt − gap under the headline prompt. */
  kind: 'drift' | 'distance' | 'prompt';
  target: string;
  judge: string;
  /** Stable name of the contrast (also the calibration's test name). */
  name: string;
  terms: Array<{ cell: string; weight: number; ref: CellRef }>;
  result: Maybe<UnitInference>;
}

export interface StressorContrast extends ItemPlace {
  /** filler − real compliance (share of responses passing the checker), per position. */
  name: string;
  difference: Maybe<GapEstimate>;
  pHolm: number | null;
}

export interface ScratchResult extends JudgedCell {
  systemPrompt: string;
  /** Distinct answers (probe × paraphrase × sample): the same for every session and position. */
  answers: number;
  mean: Maybe<Estimate & { units: number }>;
}
