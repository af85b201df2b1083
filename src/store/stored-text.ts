/**
 * Model output as stored in text columns (cells.text, reasoning, error_message,
 * response_model), the same on both backends.
 *
 * A model can return any JavaScript string, and not every string survives a text
 * column: PostgreSQL refuses U+0000 (`invalid byte sequence for encoding "UTF8": 0x00`),
 * and both drivers encode to UTF-8, which turns a lone surrogate into U+FFFD. So a
 * string that holds NUL or a lone surrogate is stored as a marker (the noncharacter
 * U+FDD0) followed by its JSON string literal, whose `\u0000` / `\ud800` escapes are
 * plain ASCII; reading parses it back to the exact string. Every other string is
 * stored as it is, so stores written before this (and SQL reading them) see no change.
 * A string that itself begins with the marker is escaped the same way, so the form is
 * unambiguous; an old store's text that begins with the marker but is not a JSON
 * literal after it reads as it is.
 */

const MARKER = '\uFDD0';

/** NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function encodeStoredText(value: string): string;
export function encodeStoredText(value: string | null): string | null;
export function encodeStoredText(value: string | null): string | null {
  if (value === null) return null;
  if (value.startsWith(MARKER) || UNSTORABLE.test(value)) return MARKER + JSON.stringify(value);
  return value;
}

export function decodeStoredText(value: string): string;
export function decodeStoredText(value: string | null): string | null;
export function decodeStoredText(value: string | null): string | null {
  if (value === null || !value.startsWith(MARKER)) return value;
  try {
    const parsed: unknown = JSON.parse(value.slice(MARKER.length));
    return typeof parsed === 'string' ? parsed : value;
  } catch {
    return value;
  }
}
