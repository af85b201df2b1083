import { type ClassCounts, type Piece, keep, placeholder } from './pieces.js';

/**
 * Very long strings (an 8 MB image block, a minified bundle) are handled by one linear
 * scan before any regex runs: V8's backtracking engine keeps a stack entry per repeated
 * character in patterns such as `[A-Za-z0-9+/]{20,}`, and overflows its stack a few
 * million characters into a single run.
 */

/** A run of base64 characters this long is data whatever its mix of characters. */
export const LONG_BASE64_RUN = 64 * 1024;
/** Longest stretch without whitespace that the regex passes are given at once. */
export const MAX_REGEX_RUN = 1024 * 1024;

const isBase64Char = (c: number) =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 43 || c === 47 || c === 61 || c === 95 || c === 45;
const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;
// Characters a secret's shape never spans: safe places to cut a long run.
const isCutChar = (c: number) =>
  c === 44 || c === 59 || c === 123 || c === 125 || c === 40 || c === 41 || c === 91 || c === 93 || c === 34 || c === 39 || c === 60 || c === 62;

/** True when `text` is one run of 200+ base64 characters holding digits and both cases. */
export function isWholeBase64(text: string): boolean {
  if (text.length < 200) return false;
  let digit = false;
  let upper = false;
  let lower = false;
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 61 && text.length - end < 2) end--;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 61 || !isBase64Char(c)) return false;
    if (c >= 48 && c <= 57) digit = true;
    else if (c >= 65 && c <= 90) upper = true;
    else if (c >= 97 && c <= 122) lower = true;
  }
  return digit && upper && lower;
}

/**
 * Splits `text` into pieces so that no unlocked piece holds a run of base64 characters
 * of `LONG_BASE64_RUN` or more (each becomes a locked `<BASE64_DATA>`), nor a stretch
 * without whitespace longer than `MAX_REGEX_RUN` (cut at punctuation a secret does not
 * span, else hard). Short text comes back as one piece without any copying.
 */
export function splitLongRuns(text: string, counts: ClassCounts): Piece[] {
  if (text.length < LONG_BASE64_RUN) return [keep(text)];
  const pieces: Piece[] = [];
  let pieceStart = 0;
  let runStart = -1; // start of the current base64 run
  let stretchStart = 0; // start of the current stretch without whitespace
  let lastCut = -1; // last cut character in the current stretch
  const n = text.length;
  const flushTo = (end: number) => {
    if (end > pieceStart) pieces.push(keep(text.slice(pieceStart, end)));
    pieceStart = end;
  };
  for (let i = 0; i <= n; i++) {
    const c = i < n ? text.charCodeAt(i) : 32;
    if (isBase64Char(c)) {
      if (runStart < 0) runStart = i;
    } else {
      if (runStart >= 0 && i - runStart >= LONG_BASE64_RUN) {
        flushTo(runStart);
        pieces.push(placeholder('<BASE64_DATA>', 'base64_data', counts));
        pieceStart = i;
        stretchStart = i;
        lastCut = -1;
      }
      runStart = -1;
    }
    if (i === n) break;
    if (isSpace(c)) {
      stretchStart = i + 1;
      lastCut = -1;
      continue;
    }
    if (isCutChar(c)) lastCut = i;
    const from = Math.max(stretchStart, pieceStart);
    // Base64 runs are still being measured; only a mixed stretch is cut here.
    if (i - from >= MAX_REGEX_RUN && (runStart < 0 || i - runStart < LONG_BASE64_RUN)) {
      const cut = lastCut > from ? lastCut + 1 : i;
      flushTo(cut);
      stretchStart = cut;
      lastCut = -1;
    }
  }
  flushTo(n);
  return pieces;
}
