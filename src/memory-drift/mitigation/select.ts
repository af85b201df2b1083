import { selectPreferencePair } from '../../metrics/training.js';
import type { DpoJudgement } from './dpo-judge.js';

/** One candidate response with the outcome of its judgement. */
export interface JudgedCandidate {
  index: number;
  text: string;
  withInstruction: boolean;
  /** Store key of the generation cell (for provenance). */
  key: string;
  status: 'judged' | 'uncertain' | 'invalid' | 'unanswered';
  judgement?: DpoJudgement;
}

export interface SelectedPair {
  chosen: JudgedCandidate & { judgement: DpoJudgement };
  rejected: JudgedCandidate & { judgement: DpoJudgement };
}

export type PairOutcome = { kind: 'pair'; pair: SelectedPair } | { kind: 'no_chosen' | 'no_rejected' | 'no_judged' };

/**
 * The paper's rule (`selectPreferencePair`: y⁺ iff h = 5, d = 0, a = 1; y⁻ iff h < 5 and
 * (d = 1 or a = 0)) over the confidently judged candidates of one prompt. The paper forms
 * one pair per (x, p) without saying which y⁺ / y⁻ when several qualify: we take the first
 * chosen candidate (instruction arm first, then sample order) and the rejected candidate
 * with the lowest helpfulness (ties by the same order) — the clearest contrast.
 */
export function selectDpoPair(candidates: readonly JudgedCandidate[]): PairOutcome {
  const judged = candidates.filter((c): c is JudgedCandidate & { judgement: DpoJudgement } => c.status === 'judged' && c.judgement !== undefined);
  if (judged.length === 0) return { kind: 'no_judged' };
  const split = selectPreferencePair(
    judged.map((candidate) => ({
      candidate,
      helpfulness: candidate.judgement.helpfulness,
      distracted: candidate.judgement.distracted,
      acknowledged: candidate.judgement.acknowledged,
    })),
  );
  const chosen = split.chosen[0]?.candidate;
  if (chosen === undefined) return { kind: 'no_chosen' };
  if (split.rejected.length === 0) return { kind: 'no_rejected' };
  const rejected = split.rejected.map((e) => e.candidate).reduce((low, c) => (c.judgement.helpfulness < low.judgement.helpfulness ? c : low));
  return { kind: 'pair', pair: { chosen, rejected } };
}

/**
 * The judge-selected best candidate (GRPO reference, App. I.2): the highest helpfulness among
 * confidently judged, non-distracted candidates; ties by candidate order. Null when none.
 */
export function selectReferenceCandidate(candidates: readonly JudgedCandidate[]): (JudgedCandidate & { judgement: DpoJudgement }) | null {
  let best: (JudgedCandidate & { judgement: DpoJudgement }) | null = null;
  for (const c of candidates) {
    if (c.status !== 'judged' || c.judgement === undefined || c.judgement.distracted === 1) continue;
    if (best === null || c.judgement.helpfulness > best.judgement.helpfulness) best = c as JudgedCandidate & { judgement: DpoJudgement };
  }
  return best;
}
