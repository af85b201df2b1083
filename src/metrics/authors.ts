import { InvalidArgumentError } from '../core/errors.js';
import { normalizedEditDistance } from './edit-distance.js';
import { requireString, requireSymbols, requireUnitInterval, type SymbolSequence } from './validate.js';

/**
 * The DriftLens authors' released metric and reward definitions where they differ from the paper
 * (drift-lens `src/symbolic_drift/metrics.py` and `reward.py`, described in
 * docs/decisions.md#d5 and #d11), for `procedure: reference` and the `authors` reward presets.
 * Written from their definitions; checked against their functions in
 * src/metrics/authors.test.ts (golden values: tools/golden/PARITY.md).
 *
 * - Jensen–Shannon: histograms smoothed by ε = 1e-8 on every symbol of the union, no
 *   renormalisation, natural log, √JSD / √ln 2, no clamp: an empty sequence has an empty
 *   histogram, so empty vs non-empty is ≈ 0.7071 (echolens's paper metric: 1);
 * - drift d = α · ED/max(n, m) + (1 − α) · JS with that JS (empty vs non-empty ≈ 0.8536);
 * - format reward: steps found by their regular expression (`<step_N>` up to the next
 *   `<step_K>`, `<answer>` or `</think>`, or `Step N:` forms; case-insensitive), 0 without a step,
 *   else 0.25 + 0.25 for a closed `<answer>…</answer>` + 0.5 when *any* step content (closing tag
 *   included, trimmed) has ≥ 2 characters;
 * - lexical diversity: the first closed `<answer>` block, whitespace-split, tokens kept only when
 *   every character is a letter (Python `isalpha`), lowercased.
 */

const EPSILON = 1e-8;

/** Python `str.isspace` characters (what `str.split()` and `str.strip()` use). */
const PY_SPACE = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'gu');
const PY_SPLIT = new RegExp(`[${PY_SPACE}]+`, 'u');

/** Python's `str.strip()`. */
export function pythonStrip(text: string): string {
  return text.replace(PY_STRIP, '');
}

/** Python's `str.split()` (no argument): runs of whitespace separate, no empty items. */
export function pythonSplit(text: string): string[] {
  return text.split(PY_SPLIT).filter((t) => t !== '');
}

function histogram(sequence: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const s of sequence) counts.set(s, (counts.get(s) ?? 0) + 1);
  for (const [k, v] of counts) counts.set(k, v / sequence.length);
  return counts;
}

function kl(p: Map<string, number>, q: Map<string, number>, keys: readonly string[]): number {
  let total = 0;
  for (const key of keys) {
    const pv = (p.get(key) ?? 0) + EPSILON;
    const qv = (q.get(key) ?? 0) + EPSILON;
    total += pv * Math.log(pv / qv);
  }
  return total;
}

/** The authors' normalised Jensen–Shannon distance of two symbol histograms (see the module note). */
export function authorsJensenShannon(a: SymbolSequence, b: SymbolSequence): number {
  requireSymbols(a, 'a');
  requireSymbols(b, 'b');
  const hi = histogram(a);
  const hj = histogram(b);
  const keys = [...new Set([...hi.keys(), ...hj.keys()])];
  const m = new Map(keys.map((k) => [k, 0.5 * ((hi.get(k) ?? 0) + (hj.get(k) ?? 0))]));
  const jsd = 0.5 * kl(hi, m, keys) + 0.5 * kl(hj, m, keys);
  return Math.sqrt(jsd) / Math.sqrt(Math.LN2);
}

/** The authors' drift d(a, b) = α · normalised edit distance + (1 − α) · their JS. */
export function authorsDrift(a: SymbolSequence, b: SymbolSequence, alpha = 0.5): number {
  requireUnitInterval(alpha, 'alpha');
  requireSymbols(a, 'a');
  requireSymbols(b, 'b');
  // The edit-distance term is the paper's: ED/max(n, m), 0 when both are empty.
  return alpha * normalizedEditDistance(a, b) + (1 - alpha) * authorsJensenShannon(a, b);
}

/** The authors' perturbation drift: the mean of {@link authorsDrift}(anchor, v); 0 with no variant. */
export function authorsPerturbationDrift(anchor: SymbolSequence, variants: readonly SymbolSequence[], alpha = 0.5): number {
  if (!Array.isArray(variants)) throw new InvalidArgumentError('variants', 'expected an array of symbol sequences');
  if (variants.length === 0) return 0;
  return variants.reduce((sum, v) => sum + authorsDrift(anchor, v, alpha), 0) / variants.length;
}

// Python `\d` matches any Unicode decimal digit; `int()` reads them.
const STEP_RE =
  /(?:<step_?(\p{Nd}+)>(.*?)(?=<step_\p{Nd}+>|<answer>|<\/think>)|(?:Step|step)_?(\p{Nd}+):[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*(.*?)(?=(?:Step|step)_?\p{Nd}+:|<answer>|<\/think>))/gisu;
const ANSWER_RE = /<answer>(.*?)<\/answer>/isu;

const codePoints = (text: string) => [...text].length;

/** The step contents the authors' format reward sees (trimmed, closing tags included). */
export function authorsStepContents(text: string): string[] {
  requireString(text, 'text');
  const out: string[] = [];
  for (const m of text.matchAll(STEP_RE)) {
    if (m[1] !== undefined && m[1] !== '') out.push(pythonStrip(m[2] ?? ''));
    else if (m[3] !== undefined && m[3] !== '') out.push(pythonStrip(m[4] ?? ''));
  }
  return out;
}

/** The authors' `format_reward` (min_step_chars = 2). */
export function authorsFormatReward(text: string): number {
  const steps = authorsStepContents(text);
  if (steps.length === 0) return 0;
  let reward = 0.25;
  if (ANSWER_RE.test(text)) reward += 0.25;
  if (steps.some((content) => codePoints(content) >= 2)) reward += 0.5;
  return reward;
}

const ALPHA = /^\p{L}+$/u;

/** The authors' `answer_lexical_diversity_reward` (min_tokens 5, d0 0.2, k 8). */
export function authorsLexicalDiversity(text: string): number {
  requireString(text, 'text');
  const match = ANSWER_RE.exec(text);
  if (match === null) return 0;
  const tokens = pythonSplit(pythonStrip(match[1] ?? ''))
    .filter((t) => ALPHA.test(t))
    .map((t) => t.toLowerCase());
  if (tokens.length === 0) return 0;
  const diversity = new Set(tokens).size / tokens.length;
  const lengthScale = Math.min(1, tokens.length / 5);
  return 1 / (1 + Math.exp(-8 * (diversity * lengthScale - 0.2)));
}
