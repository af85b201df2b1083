import { createRequire } from 'node:module';
import { nextTurn } from '../core/next-turn.js';

type Counter = (text: string) => number;
let bpe: Counter | undefined;

/**
 * The o200k tokenizer, loaded on first use: its tables take about 20 MB of heap and 60 MB of
 * RSS, and most runs never count a token (providers report usage).
 */
function countBpeTokens(text: string): number {
  bpe ??= (createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as { countTokens: Counter }).countTokens;
  return bpe(text);
}

/**
 * Longest stretch without whitespace handed to the BPE tokenizer at once. gpt-tokenizer's
 * merge loop is quadratic in the length of one pre-token: a 300k-character response
 * without whitespace took minutes. Longer stretches are counted in pieces of this size.
 */
export const MAX_BPE_RUN = 256;

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

/**
 * o200k token count of `text` in linear time. Text whose stretches without whitespace are
 * all at most `MAX_BPE_RUN` characters long is counted exactly; a longer stretch is
 * counted piece by piece (tokens never span a piece boundary, so the count can be a few
 * tokens high for such text — it is an estimate used for limits, costs and usage).
 */
export function countTokens(text: string): number {
  let run = 0;
  let long = false;
  for (let i = 0; i < text.length; i++) {
    if (isSpace(text.charCodeAt(i))) run = 0;
    else if (++run > MAX_BPE_RUN) {
      long = true;
      break;
    }
  }
  if (!long) return countBpeTokens(text);
  let total = 0;
  let start = 0; // start of the text not yet counted
  let runStart = 0;
  for (let i = 0; i <= text.length; i++) {
    const end = i === text.length;
    if (end || isSpace(text.charCodeAt(i))) {
      runStart = i + 1;
      continue;
    }
    if (i - runStart + 1 === MAX_BPE_RUN) {
      // A full piece: count what came before it (normal text), then the piece itself.
      if (runStart > start) total += countBpeTokens(text.slice(start, runStart));
      total += countBpeTokens(text.slice(runStart, i + 1));
      start = i + 1;
      runStart = i + 1;
    }
  }
  if (start < text.length) total += countBpeTokens(text.slice(start));
  return total;
}

/** Characters counted between two yields to the event loop by countTokensSliced. */
export const TOKEN_SLICE_CHARS = 32_768;

/**
 * countTokens of a long text, a slice at a time with a yield to the event loop in between, so a
 * megabyte prompt (a reward server's labeler call through `sim:`) never holds its thread for
 * hundreds of ms. Slices end just before a space that follows a non-space character: the o200k
 * pre-tokenizer never joins such a pair into one token (a space only ever starts a token or belongs
 * to a run of whitespace), so the sum equals countTokens of the whole text. A slice without such a
 * place is counted whole.
 */
export async function countTokensSliced(text: string, sliceChars = TOKEN_SLICE_CHARS): Promise<number> {
  if (text.length <= sliceChars) return countTokens(text);
  let total = 0;
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + sliceChars);
    if (end < text.length) {
      let cut = end;
      while (cut > start && !(text.charCodeAt(cut) === 32 && !isSpace(text.charCodeAt(cut - 1)))) cut--;
      if (cut > start) end = cut;
      else {
        // No place to cut within the slice: extend to the next one.
        cut = end;
        while (cut < text.length && !(text.charCodeAt(cut) === 32 && !isSpace(text.charCodeAt(cut - 1)))) cut++;
        end = cut;
      }
    }
    total += countTokens(text.slice(start, end));
    start = end;
    if (start < text.length) await nextTurn();
  }
  return total;
}
