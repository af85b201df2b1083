import { InputError, InvalidArgumentError } from '../../core/errors.js';
import { dtw } from '../../metrics/dtw.js';
import { antiDistractionReward } from '../../metrics/anti-distraction.js';
import { formatReward } from '../../metrics/format-reward.js';
import { lexicalDiversity } from '../../metrics/lexical-diversity.js';
import { readabilityReward } from '../../metrics/readability.js';
import { sriDrift } from '../../metrics/sri.js';
import { authorsDrift, authorsFormatReward, authorsLexicalDiversity } from '../../metrics/authors.js';
import { type PreparedSymbolEmbeddings, referenceDtw, type SymbolEmbedder } from '../../metrics/fastdtw.js';

/**
 * GRPO reward (DriftLens eq. 8–10, docs/decisions.md#d11), with the DriftLens authors' auxiliary
 * rewards selectable:
 *
 *   R = w_fmt · r_fmt + w_dtw · r_dtw + w_sri · r_sri + w_ad · r_ad + w_read · r_read + w_div · r_div
 *
 * - r_fmt: the format reward of eq. 9 (metrics/format-reward.ts);
 * - r_dtw, r_sri: drift of the labels ô(y) from o*(x) — `drift: 'negative'` gives r = −d (paper
 *   eq. 10), `drift: 'similarity'` gives r = 1 − d (the authors' released code); DTW is discrete,
 *   normalised by max(n, m); SRI is the drift of eq. 16 (α = 0.5);
 * - r_ad: anti-distraction (metrics/anti-distraction.ts), in [0, 1];
 * - r_read: readability, a Gaussian around a target Flesch reading ease (metrics/readability.ts);
 * - r_div: lexical diversity of the answer (App. I.3, metrics/lexical-diversity.ts).
 *
 * Presets: `paper` = R = r_fmt − DTW (eq. 8); `authors` = 0.5 · (1 − DTW) + 0.5 · r_fmt (the
 * released verl reward); `authors-sri` = 0.4 · (1 − DTW) + 0.4 · (1 − SRI) + 0.2 · r_fmt (the
 * released README's DTW+SRI variant; the paper gives no weights for it).
 */
export interface RewardWeights {
  format: number;
  dtw: number;
  sri: number;
  antiDistraction?: number;
  readability?: number;
  diversity?: number;
  /** How DTW and SRI enter R: −d (paper, default) or 1 − d (authors' code). */
  drift?: DriftOrientation;
  /** Target Flesch reading ease of r_read (default 60) and the Gaussian's width (default 25). */
  readabilityTarget?: number;
  readabilityWidth?: number;
  /**
   * Whose definitions score the parts: `paper` (default; eq. 9, App. I.3, the paper's metrics) or
   * `authors` (their released reward.py and metrics.py: their format reward and lexical diversity,
   * an empty label sequence scored as their code scores it — DTW term 0, SRI with their
   * Jensen–Shannon — and, when symbol embeddings are given, their cosine-fastdtw DTW).
   */
  rules?: RewardRules;
}

export type RewardRules = 'paper' | 'authors';

export type DriftOrientation = 'negative' | 'similarity';

/** Every field set (what the server reports and scores with). */
export type ResolvedRewardWeights = Required<RewardWeights>;

export const PAPER_REWARD_WEIGHTS: Readonly<RewardWeights> = Object.freeze({ format: 1, dtw: 1, sri: 0 });

export const REWARD_PRESETS = Object.freeze({
  paper: Object.freeze({ format: 1, dtw: 1, sri: 0, drift: 'negative' }),
  authors: Object.freeze({ format: 0.5, dtw: 0.5, sri: 0, drift: 'similarity', rules: 'authors' }),
  'authors-sri': Object.freeze({ format: 0.2, dtw: 0.4, sri: 0.4, drift: 'similarity', rules: 'authors' }),
} satisfies Record<string, RewardWeights>);

export type RewardPreset = keyof typeof REWARD_PRESETS;

export const WEIGHT_KEYS = ['format', 'dtw', 'sri', 'antiDistraction', 'readability', 'diversity'] as const;
export type WeightKey = (typeof WEIGHT_KEYS)[number];

export function checkRewardWeights(weights: RewardWeights): ResolvedRewardWeights {
  const out: Record<string, number | string> = {};
  for (const key of WEIGHT_KEYS) {
    const w = weights[key] ?? 0;
    if (typeof w !== 'number' || !Number.isFinite(w)) throw new InvalidArgumentError(`weights.${key}`, `must be a finite number, got ${String(w)}`);
    out[key] = w;
  }
  const drift = weights.drift ?? 'negative';
  if (drift !== 'negative' && drift !== 'similarity')
    throw new InvalidArgumentError('weights.drift', `must be "negative" or "similarity", got ${String(drift)}`);
  const target = weights.readabilityTarget ?? 60;
  const width = weights.readabilityWidth ?? 25;
  if (!Number.isFinite(target)) throw new InvalidArgumentError('weights.readabilityTarget', `must be a finite number, got ${String(target)}`);
  if (!(Number.isFinite(width) && width > 0)) throw new InvalidArgumentError('weights.readabilityWidth', `must be a number > 0, got ${String(width)}`);
  const rules = weights.rules ?? 'paper';
  if (rules !== 'paper' && rules !== 'authors') throw new InvalidArgumentError('weights.rules', `must be "paper" or "authors", got ${String(rules)}`);
  return { ...(out as Record<WeightKey, number>), drift, readabilityTarget: target, readabilityWidth: width, rules };
}

export interface RewardComponents {
  /** r_fmt ∈ {0, 0.25, 0.5, 0.75, 1}. */
  format: number;
  /** Normalised DTW ∈ [0, 1]; 1 (worst) when the response has no steps to label. */
  dtw: number;
  /** SRI drift ∈ [0, 1]; 1 (worst) when the response has no steps. */
  sri: number;
  /** r_dtw and r_sri as they enter R (−d or 1 − d). */
  r_dtw: number;
  r_sri: number;
  /** Anti-distraction ∈ [0, 1]; 0 without steps. */
  anti_distraction: number;
  /** Readability reward ∈ [0, 1]. */
  readability: number;
  /** Lexical diversity of the answer ∈ [0, 1). */
  diversity: number;
  /** The weighted total R. */
  reward: number;
}

/** The parts of R that need no labels (they are scored even when labelling fails). */
export function textComponents(response: string, weights: RewardWeights): { format: number; readability: number; diversity: number } {
  const w = checkRewardWeights(weights);
  const authors = w.rules === 'authors';
  return {
    format: authors ? authorsFormatReward(response) : formatReward(response),
    readability: readabilityReward(response, w.readabilityTarget, w.readabilityWidth),
    diversity: authors ? authorsLexicalDiversity(response) : lexicalDiversity(response),
  };
}

/** r for a drift d: −d (paper) or 1 − d (authors). */
const driftTerm = (d: number, drift: DriftOrientation) => (drift === 'negative' ? -d : 1 - d);

/**
 * Scores one response from its labels ô(y). A response without steps (empty `symbols`) has
 * no trajectory: it gets the worst drift (DTW = SRI = 1) and anti-distraction 0 instead of an
 * undefined distance.
 */
export function scoreLabelledResponse(
  response: string,
  reference: readonly string[],
  symbols: readonly string[],
  weights: RewardWeights = PAPER_REWARD_WEIGHTS,
  options: {
    embed?: SymbolEmbedder | PreparedSymbolEmbeddings;
    /** textComponents(response, weights) when already computed (the reward server's worker does). */
    text?: { format: number; readability: number; diversity: number };
  } = {},
): RewardComponents {
  if (reference.length === 0) throw new InvalidArgumentError('reference', 'needs at least one symbol');
  const w = checkRewardWeights(weights);
  const text = options.text ?? textComponents(response, w);
  const authors = w.rules === 'authors';
  // The authors' DTW is cosine fastdtw over embeddings when given. Without steps DTW is NaN: the drift is then
  // the worst (1), and the authors' dtw_reward (1 − normalised DTW) is 0 where it is NaN.
  const d =
    symbols.length === 0
      ? Number.NaN
      : authors && options.embed
        ? referenceDtw(reference, symbols, options.embed).normalized
        : dtw(symbols, reference, { path: false }).normalized;
  const dtwDrift = Number.isNaN(d) ? 1 : d;
  const rDtw = authors && Number.isNaN(d) ? 0 : driftTerm(dtwDrift, w.drift);
  const sri = authors ? authorsDrift(reference, symbols) : symbols.length === 0 ? 1 : sriDrift(symbols, reference);
  const antiDistraction = antiDistractionReward(reference, symbols);
  const rSri = driftTerm(sri, w.drift);
  const reward =
    w.format * text.format +
    w.dtw * rDtw +
    w.sri * rSri +
    w.antiDistraction * antiDistraction +
    w.readability * text.readability +
    w.diversity * text.diversity;
  return {
    format: text.format,
    dtw: dtwDrift,
    sri,
    r_dtw: rDtw,
    r_sri: rSri,
    anti_distraction: antiDistraction,
    readability: text.readability,
    diversity: text.diversity,
    reward,
  };
}

/**
 * R for a response that could not be labelled: its label-free parts as scored, and the worst
 * value of each label-based part (DTW = SRI = 1, anti-distraction 0), so an error never beats a
 * scored answer.
 */
export function worstCaseReward(text: { format: number; readability: number; diversity: number }, weights: RewardWeights): number {
  const w = checkRewardWeights(weights);
  const worst = driftTerm(1, w.drift);
  return w.format * text.format + w.readability * text.readability + w.diversity * text.diversity + (w.dtw + w.sri) * worst;
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

/**
 * The question id carried by a trainer's label (`labels[i]` of OpenRLHF, `ground_truth` of verl):
 * a plain id string, or a JSON object string / object with `question_id`.
 */
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
