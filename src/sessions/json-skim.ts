/**
 * Counting a transcript (listing, `content: 'none'`) needs the structure of each
 * line, not its long texts. Most bytes of a transcript sit in a few long string
 * values (tool output, thinking, file contents). `skimJsonLine` returns the line's
 * JSON text with every long string cut to its first bytes, found with native
 * `indexOf`, so the long strings are never decoded nor parsed. Pure.
 *
 * The skimmed line parses to the same structure with shortened strings. A string
 * whose kept head is blank is kept whole (so "has text" checks stay exact). If the
 * line is not well-formed the rest is left as it was, and JSON.parse reports it.
 */

export interface SkimOptions {
  /** Lines shorter than this are decoded as they are (JSON.parse is fast on them; skimming only pays on long lines). */
  minLineBytes?: number;
  /** Strings longer than this (in bytes, quotes excluded) are cut. */
  maxStringBytes?: number;
  /** Bytes of a cut string that are kept. */
  keepBytes?: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export function skimJsonLine(line: Buffer, options: SkimOptions = {}): string {
  const minLine = options.minLineBytes ?? 64 * 1024;
  const maxString = options.maxStringBytes ?? 8 * 1024;
  const keep = Math.min(options.keepBytes ?? 256, maxString);
  if (line.length < minLine) return line.toString('utf8');
  const pieces: Buffer[] = [];
  let copied = 0;
  let position = 0;
  for (;;) {
    const start = line.indexOf(QUOTE, position);
    if (start === -1) break;
    const end = closingQuote(line, start + 1);
    if (end === -1) break;
    if (end - start - 1 > maxString) {
      const cut = safeCut(line, start + 1, start + 1 + keep);
      if (!isBlankJsonText(line, start + 1, cut)) {
        pieces.push(line.subarray(copied, cut));
        copied = end;
      }
    }
    position = end + 1;
  }
  if (pieces.length === 0) return line.toString('utf8');
  pieces.push(line.subarray(copied));
  return Buffer.concat(pieces).toString('utf8');
}

/** Index of the quote that closes a string whose content starts at `from`, or -1. */
function closingQuote(line: Buffer, from: number): number {
  let at = from;
  for (;;) {
    const q = line.indexOf(QUOTE, at);
    if (q === -1) return -1;
    let slashes = 0;
    while (q - 1 - slashes >= from && line[q - 1 - slashes] === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return q;
    at = q + 1;
  }
}

/** Moves a cut point back so it does not split an escape sequence. */
function safeCut(line: Buffer, from: number, cut: number): number {
  // An escape starts at a backslash preceded by an even run of backslashes; it spans 2 bytes, or 6 for \uXXXX.
  for (let i = Math.max(from, cut - 6); i < cut; i += 1) {
    if (line[i] !== BACKSLASH) continue;
    let run = 0;
    while (i - 1 - run >= from && line[i - 1 - run] === BACKSLASH) run += 1;
    if (run % 2 !== 0) continue;
    const length = line[i + 1] === 0x75 ? 6 : 2;
    if (i + length > cut) return i;
    i += length - 1;
  }
  return cut;
}

/** True when the JSON string content in [from, to) is only whitespace (raw or escaped). */
function isBlankJsonText(line: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) {
    const b = line[i]!;
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) continue;
    if (b === BACKSLASH) {
      const next = line[i + 1];
      if (next === 0x6e || next === 0x74 || next === 0x72) {
        i += 1;
        continue;
      }
    }
    return false;
  }
  return true;
}
