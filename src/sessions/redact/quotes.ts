import { type ClassCounts, type Piece, applyPass, placeholder } from './pieces.js';

/** Minimum length of a marked passage: shorter text would match by accident. */
export const MIN_QUOTE_LENGTH = 20;

/**
 * Passages the user marked as third-party text (a quote file) → `<REDACTED_QUOTE>`.
 * Whitespace inside a passage matches any whitespace run, including JSON-escaped `\n`.
 */
export function compileQuotes(quotes: readonly string[]): RegExp | null {
  const sources = quotes
    .map((quote) => quote.trim())
    .filter((quote) => quote.length >= MIN_QUOTE_LENGTH)
    .sort((a, b) => b.length - a.length)
    .map((quote) =>
      quote
        .split(/\s+/)
        .map((word) => word.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
        .join(String.raw`(?:\s|\\[nrt])+`),
    );
  return sources.length === 0 ? null : new RegExp(sources.join('|'), 'g');
}

export function redactQuotes(input: Piece[], pattern: RegExp | null, counts: ClassCounts): Piece[] {
  if (pattern === null) return input;
  return applyPass(input, pattern, () => [placeholder('<REDACTED_QUOTE>', 'quote', counts)]);
}

/** Splits a quote file: passages separated by lines that hold only `---`. */
export function parseQuoteFile(content: string): string[] {
  return content
    .split(/^---[ \t]*$/m)
    .map((passage) => passage.trim())
    .filter((passage) => passage.length > 0);
}
