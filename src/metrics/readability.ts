import { InvalidArgumentError } from '../core/errors.js';
import { requireFinite, requireString } from './validate.js';

/**
 * Flesch reading ease and the readability reward (an auxiliary GRPO reward of the DriftLens
 * authors' released code: a Gaussian around a target reading ease).
 *
 * FRE = 206.835 − 1.015 · (words / sentences) − 84.6 · (syllables / words)   (Flesch, 1948)
 *
 * Counting rules (written here; docs/mitigation.md#auxiliary-rewards):
 * - markup tags (`<step_1>`, `</answer>`, …) are removed first: they are format, not prose;
 * - a word is a maximal run of letters, with inner apostrophes kept (`don't` is one word);
 *   digits and punctuation are not words;
 * - a sentence ends at a run of `.`, `!` or `?` (or a line break after text with no terminator);
 *   text with words but no terminator is one sentence;
 * - syllables come from the spelling heuristic {@link countSyllables}. Dictionary-based counters
 *   (textstat's) differ on some words, so values can differ from textstat's by a few points.
 */

const TAG = /<\/?[A-Za-z][^<>]*>/g;
const WORD = /\p{L}+(?:['’]\p{L}+)*/gu;

/**
 * English syllables of one word by spelling: vowel groups (a, e, i, o, u, and y after the first
 * letter), less a silent ending — a final `e` (but not a consonant + `le`, as in "table"),
 * `-ed` unless after t or d ("jumped" 1, "wanted" 2), `-es` unless after s, x, z, c, g, ch or sh
 * or a consonant + l ("makes" 1, "boxes" 2, "tables" 2). Words of up to three letters and words without a vowel group count 1.
 */
export function countSyllables(word: string): number {
  requireString(word, 'word');
  let w = word.toLowerCase().replace(/[^a-z]/g, '');
  if (w.length === 0) return 0;
  if (w.length <= 3) return 1;
  if (w.endsWith('ed') && !/[td]ed$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('es') && !/(?:[sxzcg]|ch|sh|[^aeiouy]l)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('e') && !/[^aeiouy]le$/.test(w) && !w.endsWith('ee')) w = w.slice(0, -1);
  // A leading y is a consonant ("yellow"); elsewhere y is a vowel ("happy").
  const groups = w.replace(/^y/, '').match(/[aeiouy]+/g);
  return Math.max(1, groups?.length ?? 0);
}

export interface ReadabilityCounts {
  words: number;
  sentences: number;
  syllables: number;
  /** Flesch reading ease; null for a text without words. */
  fre: number | null;
}

/** Words, sentences, syllables and Flesch reading ease of a text (see the counting rules above). */
export function fleschReadingEase(text: string): ReadabilityCounts {
  requireString(text, 'text');
  const prose = text.replace(TAG, ' ');
  const words = prose.match(WORD) ?? [];
  if (words.length === 0) return { words: 0, sentences: 0, syllables: 0, fre: null };
  // Sentences: pieces between terminators (or line breaks) that contain a word.
  const sentences = prose.split(/[.!?]+|\n+/).filter((piece) => /\p{L}/u.test(piece)).length;
  const syllables = words.reduce((sum, word) => sum + countSyllables(word), 0);
  const fre = 206.835 - 1.015 * (words.length / sentences) - 84.6 * (syllables / words.length);
  return { words: words.length, sentences, syllables, fre };
}

/**
 * Readability reward: exp(−(FRE − target)² / (2 · width²)), 1 at the target reading ease and
 * falling off on both sides (too dense and too simple are both penalised). The authors' code uses
 * target 60 (plain English) and width 25. A text without words scores 0.
 */
export function readabilityReward(text: string, target = 60, width = 25): number {
  requireFinite(target, 'target');
  requireFinite(width, 'width');
  if (width <= 0) throw new InvalidArgumentError('width', `must be > 0, got ${width}`);
  const { fre } = fleschReadingEase(text);
  if (fre === null) return 0;
  return Math.exp(-((fre - target) ** 2) / (2 * width * width));
}
