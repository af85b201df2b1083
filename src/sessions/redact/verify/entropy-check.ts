/**
 * The verifier's own randomness test (independent of the redactor's): bits per
 * character from a 128-slot histogram against a length-scaled bar, plus how often
 * neighbouring characters change kind (letters/digits/case), which separates
 * generated tokens from long identifiers.
 */
export function bitsPerChar(token: string): number {
  const histogram = new Uint32Array(128);
  let other = 0;
  for (let i = 0; i < token.length; i++) {
    const code = token.charCodeAt(i);
    if (code < 128) histogram[code]!++;
    else other++;
  }
  let bits = 0;
  const n = token.length;
  const add = (count: number) => {
    if (count > 0) bits -= (count / n) * Math.log2(count / n);
  };
  for (const count of histogram) add(count);
  add(other);
  return bits;
}

function kindOf(code: number): number {
  if (code >= 48 && code <= 57) return 1;
  if (code >= 97 && code <= 122) return 2;
  if (code >= 65 && code <= 90) return 3;
  return 4;
}

export interface TokenShape {
  length: number;
  digits: number;
  lower: number;
  upper: number;
  changes: number;
}

export function shapeOf(token: string): TokenShape {
  const shape: TokenShape = { length: token.length, digits: 0, lower: 0, upper: 0, changes: 0 };
  let previous = 0;
  for (let i = 0; i < token.length; i++) {
    const kind = kindOf(token.charCodeAt(i));
    if (kind === 1) shape.digits++;
    else if (kind === 2) shape.lower++;
    else if (kind === 3) shape.upper++;
    if (i > 0 && kind !== previous) shape.changes++;
    previous = kind;
  }
  return shape;
}

function vowelFraction(token: string): number {
  let letters = 0;
  let vowels = 0;
  for (const ch of token) {
    const lower = ch.toLowerCase();
    if (lower >= 'a' && lower <= 'z') {
      letters++;
      if ('aeiou'.includes(lower)) vowels++;
    }
  }
  return letters === 0 ? 0 : vowels / letters;
}

/** Longest stretch without a `-`, `_`, `=` or `.` separator. */
function longestRun(token: string): number {
  let best = 0;
  let run = 0;
  for (const ch of token) {
    if (ch === '-' || ch === '_' || ch === '=' || ch === '.') run = 0;
    else best = Math.max(best, ++run);
  }
  return best;
}

const isUpperChar = (ch: string) => ch >= 'A' && ch <= 'Z';
const isLowerChar = (ch: string) => ch >= 'a' && ch <= 'z';
const isDigitChar = (ch: string) => ch >= '0' && ch <= '9';

/**
 * Code identifiers (`scaleTypeNotWorkWithMark`, `getJSDocCommentsAndTags`, `isES2015OrLater`):
 * walked character by character into words — a new word starts at a capital after a small
 * letter or a digit, at the last capital of an acronym that a small letter follows, and where
 * letters and digits meet. Identifiers have long words that nearly all hold a vowel.
 */
function isIdentifierWords(token: string): boolean {
  const words: string[] = [];
  let current = '';
  for (let i = 0; i < token.length; i++) {
    const ch = token[i]!;
    const previous = token[i - 1] ?? '';
    const next = token[i + 1] ?? '';
    if (ch === '-' || ch === '_') {
      if (current.length > 0) words.push(current);
      current = '';
      continue;
    }
    const boundary =
      current.length > 0 &&
      ((isUpperChar(ch) && (isLowerChar(previous) || isDigitChar(previous))) ||
        (isUpperChar(ch) && isUpperChar(previous) && isLowerChar(next)) ||
        isDigitChar(ch) !== isDigitChar(previous));
    if (boundary) {
      words.push(current);
      current = '';
    }
    current += ch;
  }
  if (current.length > 0) words.push(current);
  const lettered = words.filter((word) => !isDigitChar(word[0]!));
  if (lettered.length < 3) return false;
  let letters = 0;
  let inLong = 0;
  let long = 0;
  let withVowel = 0;
  let singles = 0;
  let acronyms = 0;
  for (const word of words) {
    if (isDigitChar(word[0]!)) {
      if (word.length > 4) return false;
      continue;
    }
    if (!isWordShape(word)) return false;
    if (!isLowerChar(word[word.length - 1]!)) acronyms++;
    letters += word.length;
    if (word.length === 1) singles++;
    // Short words (`is`, `fs`, `In`, `JS`) say little; words of three or more letters nearly
    // always hold a vowel in names, and random letters rarely make such words at all.
    if (word.length >= 3) {
      long++;
      inLong += word.length;
      if (/[aeiouy]/i.test(word)) withVowel++;
    }
  }
  return (
    singles <= Math.max(1, 0.1 * lettered.length) && acronyms <= 0.4 * lettered.length && long >= 2 && inLong >= 0.6 * letters && withVowel >= (2 / 3) * long
  );
}

/** A small-letter word with at most one leading capital, or an acronym of up to five capitals. */
function isWordShape(word: string): boolean {
  return /^(?:[A-Z]?[a-z]+|[A-Z]{1,5})$/.test(word);
}

/** Slightly more sensitive than the redactor, so a borderline token left behind is listed. */
export function isGeneratedToken(token: string): boolean {
  const shape = shapeOf(token);
  if (shape.length < 20) return false;
  if (shape.lower + shape.upper < 4) return false;
  if (shape.digits === 0 && (shape.lower === 0 || shape.upper === 0)) return false;
  if (shape.changes / shape.length < 0.28) return false;
  if (shape.digits === 0 && vowelFraction(token) >= 0.32) return false;
  if (longestRun(token) < 12) return false;
  if (shape.digits <= 0.2 * shape.length && isIdentifierWords(token)) return false;
  const bar = shape.length >= 64 ? 4.5 : 0.82 * Math.log2(shape.length);
  return bitsPerChar(token) >= bar;
}
