import { requireString } from './validate.js';

const ANSWER_OPEN = '<answer>';
const ANSWER_CLOSE = '</answer>';
const LETTER_RUN = /\p{L}+/gu;

/**
 * The content of the first `<answer>` block when the text contains `<answer>` (up to the next
 * `</answer>`, or to the end of the text when the block is unterminated), else the whole text.
 * Tags are case-sensitive. (lexicalDiversity scores a text without `<answer>` as 0.)
 */
export function answerContent(text: string): string {
  const open = text.indexOf(ANSWER_OPEN);
  if (open < 0) return text;
  const start = open + ANSWER_OPEN.length;
  const close = text.indexOf(ANSWER_CLOSE, start);
  return close < 0 ? text.slice(start) : text.slice(start, close);
}

/**
 * Lexical diversity of a response (DriftLens App. I.3):
 * tokens T = maximal runs of Unicode letters (\p{L}) of the answer text, lowercased, after
 * NFC normalization (so a decomposed accent does not split a word); U = distinct tokens;
 * D = |U| / |T|; L = min(1, |T| / 5); score = σ(8 · (D · L − 0.2)) with σ the logistic function.
 * Digits, punctuation and symbols separate tokens and are never tokens themselves.
 *
 * The answer text is the first `<answer>…</answer>` block (see {@link answerContent}). A text
 * without `<answer>` (a refusal, an untagged reply), an empty answer block or one without
 * letters → 0, as the paper scores missing/empty/non-alphabetic answers (App. I.3). Otherwise
 * the score lies in (σ(−1.6), σ(6.4)] ≈ (0.168, 0.998].
 *
 * @throws InvalidArgumentError naming `text` when it is not a string.
 */
export function lexicalDiversity(text: string): number {
  requireString(text, 'text');
  // The paper scores the final answer inside <answer> tags; a missing answer scores 0.
  if (!text.includes(ANSWER_OPEN)) return 0;
  const tokens = answerContent(text).normalize('NFC').match(LETTER_RUN);
  if (tokens === null) return 0;
  const distinct = new Set<string>();
  for (const token of tokens) distinct.add(token.toLowerCase());
  const diversity = distinct.size / tokens.length;
  const lengthScale = Math.min(1, tokens.length / 5);
  return 1 / (1 + Math.exp(-8 * (diversity * lengthScale - 0.2)));
}
