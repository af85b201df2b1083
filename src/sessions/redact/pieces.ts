/**
 * The redactor rewrites a string as a list of pieces. A piece that a pass has
 * replaced is locked: later passes never look inside it, so placeholders are
 * never re-matched (`<USER>` stays `<USER>` even when "user" is an identity term)
 * and one value is never counted twice.
 */
export interface Piece {
  text: string;
  locked: boolean;
}

/** Replacement counts per class (`user`, `email`, `secret:openai_key`, …). */
export type ClassCounts = Record<string, number>;

export function keep(text: string): Piece {
  return { text, locked: false };
}

/** A locked piece that is not a replacement (kept context the pass vouches for). */
export function fixed(text: string): Piece {
  return { text, locked: true };
}

/** A locked replacement; counted under `cls`. */
export function placeholder(text: string, cls: string, counts: ClassCounts): Piece {
  counts[cls] = (counts[cls] ?? 0) + 1;
  return { text, locked: true };
}

/**
 * Runs `pattern` (must have the `g` flag) over every unlocked piece. `onMatch`
 * returns the pieces that replace the match, or null to leave it untouched.
 */
export function applyPass(pieces: Piece[], pattern: RegExp, onMatch: (match: RegExpExecArray) => Piece[] | null): Piece[] {
  const out: Piece[] = [];
  for (const piece of pieces) {
    if (piece.locked || piece.text.length === 0) {
      out.push(piece);
      continue;
    }
    const text = piece.text;
    pattern.lastIndex = 0;
    let cursor = 0;
    let match = pattern.exec(text);
    while (match !== null) {
      if (match[0].length === 0) {
        pattern.lastIndex += 1;
      } else {
        const replacement = onMatch(match);
        if (replacement !== null) {
          if (match.index > cursor) out.push(keep(text.slice(cursor, match.index)));
          out.push(...replacement);
          cursor = match.index + match[0].length;
        } else {
          // Let overlapping candidates that start inside a rejected match still be tried.
          pattern.lastIndex = match.index + 1;
        }
      }
      match = pattern.exec(text);
    }
    if (cursor === 0) out.push(piece);
    else if (cursor < text.length) out.push(keep(text.slice(cursor)));
  }
  return out;
}

export function joinPieces(pieces: readonly Piece[]): string {
  let text = '';
  for (const piece of pieces) text += piece.text;
  return text;
}

/** A stretch of a text to replace with the placeholder `text`, counted under `cls`. */
export interface ReplacedSpan {
  start: number;
  end: number;
  text: string;
  cls: string;
}

/**
 * `text` from `from` to `to` as pieces: the spans (offsets in `text`) become locked placeholders,
 * the rest stays unlocked text; a span that overlaps an earlier one is dropped.
 */
export function spliceSpans(text: string, from: number, to: number, spans: ReplacedSpan[], counts: ClassCounts): Piece[] {
  const pieces: Piece[] = [];
  let cursor = from;
  for (const span of spans.sort((a, b) => a.start - b.start)) {
    if (span.start < cursor) continue;
    if (span.start > cursor) pieces.push(keep(text.slice(cursor, span.start)));
    pieces.push(placeholder(span.text, span.cls, counts));
    cursor = span.end;
  }
  if (to > cursor) pieces.push(keep(text.slice(cursor, to)));
  return pieces;
}
