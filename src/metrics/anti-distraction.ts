import { dtw } from './dtw.js';
import { editDistance } from './edit-distance.js';
import { requireSymbols, type SymbolSequence } from './validate.js';

/**
 * Anti-distraction reward (an auxiliary GRPO reward of the DriftLens authors' released code; the
 * paper does not describe it). It rewards a response whose step labels ô(y) keep the reference
 * trajectory o*(x) in place and in order, and penalises unmapped steps and a changed length:
 *
 *   pos     = #{i < min(n, m) : ref_i = cand_i} / n          (same symbol at the same position)
 *   edit    = max(0, 1 − ED(ref, cand) / max(n, m))           (symbol-level Levenshtein)
 *   prefix  = length of the common leading run / n
 *   dtw     = clip(1 − σ_DTW(ref, cand), 0, 1)                (discrete cost, ÷ max(n, m))
 *   unmapped = share of the response's symbols that are `unmapped` (any letter case)
 *   length  = min(1, |n − m| / n)
 *   R = clip(0.35·pos + 0.30·edit + 0.15·prefix + 0.20·dtw − 0.25·unmapped − 0.10·length, 0, 1)
 *
 * with n = |ref|, m = |cand|. Either sequence empty → 0. The authors' DTW term is a cosine
 * distance on sentence embeddings; here it is the discrete DTW of the rest of echolens
 * (docs/mitigation.md#auxiliary-rewards).
 */
export interface AntiDistractionParts {
  position: number;
  edit: number;
  prefix: number;
  dtw: number;
  unmapped: number;
  length: number;
  reward: number;
}

export const ANTI_DISTRACTION_WEIGHTS = Object.freeze({ position: 0.35, edit: 0.3, prefix: 0.15, dtw: 0.2, unmapped: -0.25, length: -0.1 });

const clip01 = (x: number) => Math.min(1, Math.max(0, x));

export function antiDistractionParts(reference: SymbolSequence, candidate: SymbolSequence): AntiDistractionParts {
  requireSymbols(reference, 'reference');
  requireSymbols(candidate, 'candidate');
  const n = reference.length;
  const m = candidate.length;
  if (n === 0 || m === 0) return { position: 0, edit: 0, prefix: 0, dtw: 0, unmapped: 0, length: 0, reward: 0 };
  let same = 0;
  for (let i = 0; i < Math.min(n, m); i++) if (reference[i] === candidate[i]) same++;
  let lead = 0;
  while (lead < Math.min(n, m) && reference[lead] === candidate[lead]) lead++;
  const parts = {
    position: same / n,
    edit: Math.max(0, 1 - editDistance(reference, candidate) / Math.max(n, m)),
    prefix: lead / n,
    dtw: clip01(1 - dtw(reference, candidate, { path: false }).normalized),
    unmapped: candidate.filter((s) => s.toLowerCase() === 'unmapped').length / m,
    length: Math.min(1, Math.abs(n - m) / n),
  };
  const w = ANTI_DISTRACTION_WEIGHTS;
  const raw =
    w.position * parts.position + w.edit * parts.edit + w.prefix * parts.prefix + w.dtw * parts.dtw + w.unmapped * parts.unmapped + w.length * parts.length;
  return { ...parts, reward: clip01(raw) };
}

/** The anti-distraction reward R ∈ [0, 1] (see {@link antiDistractionParts}). */
export function antiDistractionReward(reference: SymbolSequence, candidate: SymbolSequence): number {
  return antiDistractionParts(reference, candidate).reward;
}
