import { histogramScratch, type InternedPair, internPair } from './symbols.js';
import type { SymbolSequence } from './validate.js';

let previousRow = new Int32Array(64);
let currentRow = new Int32Array(64);

/**
 * Bit-parallel Levenshtein distance (Myers 1999, in Hyyrö's global-distance form) for a
 * pattern of at most 32 symbols: one 32-bit word holds a whole column of vertical deltas,
 * so each symbol of `text` costs a dozen word operations instead of `patternLength` cells.
 * Bits above the pattern length carry garbage that only ever flows upwards (shifts left,
 * carries), so they never reach the bit that is read.
 */
function myersDistance(pattern: Int32Array, patternLength: number, text: Int32Array, textLength: number): number {
  const { countsA: masks } = histogramScratch();
  for (let j = 0; j < patternLength; j++) masks[pattern[j]!]! |= 1 << j;
  const top = 1 << (patternLength - 1);
  let positive = -1; // vertical deltas +1: column 0 is D(j, 0) = j
  let negative = 0;
  let score = patternLength;
  for (let i = 0; i < textLength; i++) {
    const equal = masks[text[i]!]!;
    const xv = equal | negative;
    const xh = (((equal & positive) + positive) ^ positive) | equal;
    let hp = negative | ~(xh | positive);
    let hn = positive & xh;
    if (hp & top) score++;
    else if (hn & top) score--;
    hp = (hp << 1) | 1; // row 0 is D(0, i) = i: its horizontal delta is +1
    hn <<= 1;
    positive = hn | ~(xv | hp);
    negative = hp & xv;
  }
  for (let j = 0; j < patternLength; j++) masks[pattern[j]!] = 0;
  return score;
}

/** Levenshtein distance over interned ids: bit-parallel when the shorter side has ≤ 32 symbols, else two reused DP rows. */
export function editDistanceOfPair(pair: InternedPair): number {
  const { a, n, b, m } = pair;
  if (n === 0) return m;
  if (m === 0) return n;
  if (m <= 32 && m <= n) return myersDistance(b, m, a, n);
  if (n <= 32) return myersDistance(a, n, b, m);
  if (previousRow.length <= m) {
    let size = previousRow.length;
    while (size <= m) size *= 2;
    previousRow = new Int32Array(size);
    currentRow = new Int32Array(size);
  }
  let prev = previousRow;
  let cur = currentRow;
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    const symbol = a[i - 1]!;
    cur[0] = i;
    let left = i;
    for (let j = 1; j <= m; j++) {
      const substitution = prev[j - 1]! + (symbol === b[j - 1] ? 0 : 1);
      const deletion = prev[j]! + 1;
      const insertion = left + 1;
      let best = Math.min(substitution, deletion);
      if (insertion < best) best = insertion;
      cur[j] = best;
      left = best;
    }
    const swap = prev;
    prev = cur;
    cur = swap;
  }
  return prev[m]!;
}

/**
 * Symbol-level Levenshtein distance ED(a, b): the minimum number of single-symbol
 * insertions, deletions and substitutions (each cost 1) turning `a` into `b`.
 * Every element is one atomic symbol (it is never split into characters).
 *
 * Edge cases: ED([], []) = 0; ED([], b) = |b|; ED(a, []) = |a|.
 *
 * @throws InvalidArgumentError naming `a` or `b` when it is not an array of strings.
 */
export function editDistance(a: SymbolSequence, b: SymbolSequence): number {
  return editDistanceOfPair(internPair(a, b, 'a', 'b'));
}

/**
 * ED(a, b) / max(|a|, |b|) — the d_seq term of eq. 3 / eq. 16, in [0, 1].
 * Both empty → 0; exactly one empty → 1.
 *
 * @throws InvalidArgumentError naming `a` or `b` when it is not an array of strings.
 */
export function normalizedEditDistance(a: SymbolSequence, b: SymbolSequence): number {
  const pair = internPair(a, b, 'a', 'b');
  const longest = Math.max(pair.n, pair.m);
  return longest === 0 ? 0 : editDistanceOfPair(pair) / longest;
}
