import { InputError, InvalidArgumentError } from '../../core/errors.js';
import { dtw } from '../../metrics/dtw.js';
import { formatReward } from '../../metrics/format-reward.js';
import { sriDrift } from '../../metrics/sri.js';

/**
 * GRPO reward (DriftLens eq. 8–10, docs/decisions.md#d11): R = w_fmt · r_fmt + w_dtw · r_dtw + w_sri · r_sri
 * with r_dtw = −DTW(ô(y), o*(x)) (discrete cost, normalised) and r_sri = −SRI drift(ô(y), o*(x)).
 * The paper's R = r_fmt + r_dtw is weights {format 1, dtw 1, sri 0}; the DTW+SRI+fmt variant
 * turns on `sri` (the paper gives no weights for it).
 */
export interface RewardWeights {
  format: number;
  dtw: number;
  sri: number;
}

export const PAPER_REWARD_WEIGHTS: Readonly<RewardWeights> = Object.freeze({ format: 1, dtw: 1, sri: 0 });

export function checkRewardWeights(weights: RewardWeights): RewardWeights {
  for (const key of ['format', 'dtw', 'sri'] as const) {
    const w = weights[key];
    if (typeof w !== 'number' || !Number.isFinite(w)) throw new InvalidArgumentError(`weights.${key}`, `must be a finite number, got ${String(w)}`);
  }
  return { format: weights.format, dtw: weights.dtw, sri: weights.sri };
}

export interface RewardComponents {
  /** r_fmt ∈ {0, 0.25, 0.5, 0.75, 1}. */
  format: number;
  /** Normalised DTW ∈ [0, 1]; 1 (worst) when the response has no steps to label. */
  dtw: number;
  /** SRI drift ∈ [0, 1]; 1 (worst) when the response has no steps. */
  sri: number;
  /** The weighted total R. */
  reward: number;
}

/**
 * Scores one response from its labels ô(y). A response without steps (empty `symbols`) has
 * no trajectory: it gets the worst drift (DTW = SRI = 1) instead of an undefined distance.
 */
export function scoreLabelledResponse(
  response: string,
  reference: readonly string[],
  symbols: readonly string[],
  weights: RewardWeights = PAPER_REWARD_WEIGHTS,
): RewardComponents {
  if (reference.length === 0) throw new InvalidArgumentError('reference', 'needs at least one symbol');
  const format = formatReward(response);
  const dtwDrift = symbols.length === 0 ? 1 : dtw(symbols, reference, { path: false }).normalized;
  const sri = symbols.length === 0 ? 1 : sriDrift(symbols, reference);
  const reward = weights.format * format - weights.dtw * dtwDrift - weights.sri * sri;
  return { format, dtw: dtwDrift, sri, reward };
}

/** o*(x) per question id. */
export type ReferenceMap = Map<string, string[]>;

/**
 * Reads a references JSONL: one `{"question_id": "...", "symbols": ["Category/Subcategory", …]}`
 * per line (other fields — question, response, provenance — are kept out of scoring).
 */
export function parseReferences(text: string, file = '<references>', known?: ReadonlySet<string>): ReferenceMap {
  const map: ReferenceMap = new Map();
  text.split('\n').forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    let row: { question_id?: unknown; symbols?: unknown };
    try {
      row = JSON.parse(raw) as typeof row;
    } catch (error) {
      throw new InputError(`not JSON (${(error as Error).message})`, { file, line });
    }
    if (row === null || typeof row !== 'object') throw new InputError('must be a JSON object', { file, line });
    if (typeof row.question_id !== 'string' || row.question_id === '') throw new InputError('must be a non-empty string', { file, line, field: 'question_id' });
    if (!Array.isArray(row.symbols) || row.symbols.length === 0 || row.symbols.some((s) => typeof s !== 'string' || s === '')) {
      throw new InputError('must be a non-empty array of symbol strings', { file, line, field: 'symbols' });
    }
    if (known) {
      const unknown = row.symbols.find((s) => !known.has(s as string));
      if (unknown !== undefined) throw new InputError(`"${unknown}" is not in the ontology`, { file, line, field: 'symbols' });
    }
    if (map.has(row.question_id)) throw new InputError(`duplicate question id "${row.question_id}"`, { file, line, field: 'question_id' });
    map.set(row.question_id, row.symbols as string[]);
  });
  if (map.size === 0) throw new InputError('no references', { file });
  return map;
}

/**
 * The question id carried by a trainer's label (`labels[i]` of OpenRLHF, `ground_truth` of verl):
 * a plain id string, or a JSON object string / object with `question_id`.
 */
/**
 * A reference trajectory given inline as the label (the reference implementation's verl format:
 * `ground_truth` = a list of `Category/Subcategory` symbols, or that list as a Python or JSON
 * literal string); null when the label is not such a list.
 */
export function referenceFromLabel(label: unknown): string[] | null {
  if (Array.isArray(label)) {
    return label.length > 0 && label.every((s) => typeof s === 'string' && s !== '') ? (label as string[]) : null;
  }
  if (typeof label !== 'string') return null;
  const trimmed = label.trim();
  if (!trimmed.startsWith('[') || !trimmed.endsWith(']')) return null;
  const inner = trimmed.slice(1, -1).trim();
  if (inner === '') return null;
  const symbols: string[] = [];
  const item = /\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\s*(?:,|$)/y;
  let at = 0;
  while (at < inner.length) {
    item.lastIndex = at;
    const match = item.exec(inner);
    if (match === null) return null;
    const value = (match[1] ?? match[2] ?? '').replace(/\\(.)/g, '$1');
    if (value === '') return null;
    symbols.push(value);
    at = item.lastIndex;
  }
  return symbols.length > 0 ? symbols : null;
}

export function questionIdFromLabel(label: unknown): string | null {
  if (typeof label === 'string') {
    const trimmed = label.trim();
    if (trimmed.startsWith('{')) {
      try {
        return questionIdFromLabel(JSON.parse(trimmed));
      } catch {
        return null;
      }
    }
    return trimmed === '' ? null : trimmed;
  }
  if (label !== null && typeof label === 'object' && !Array.isArray(label)) {
    const id = (label as { question_id?: unknown }).question_id;
    return typeof id === 'string' && id !== '' ? id : null;
  }
  return null;
}
