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

/**
 * Code identifiers (`scaleTypeNotWorkWithMark`, `convertBase64ToUint8Array`): walked
 * character by character into words that start at a capital followed by a small
 * letter; identifiers have long words that nearly all hold a vowel.
 */
function isIdentifierWords(token: string): boolean {
  const words: string[] = [];
  let current = '';
  for (let i = 0; i < token.length; i++) {
    const ch = token[i]!;
    const next = token[i + 1] ?? '';
    if (ch === '-' || ch === '_') {
      if (current.length > 0) words.push(current);
      current = '';
      continue;
    }
    if (ch >= 'A' && ch <= 'Z' && next >= 'a' && next <= 'z' && current.length > 0) {
      words.push(current);
      current = '';
    }
    current += ch;
  }
  if (current.length > 0) words.push(current);
  if (words.length < 3) return false;
  let letters = 0;
  let withVowel = 0;
  for (const word of words) {
    letters += word.length;
    if (!isWordShape(word)) return false;
    if (/[aeiouy]/.test(word)) withVowel++;
  }
  return letters / words.length >= 3.5 && withVowel >= 0.75 * words.length;
}

/** A small-letter word (one leading capital, up to two digits or a `V3` tag), `V3`, or an acronym. */
function isWordShape(word: string): boolean {
  let i = 0;
  let capitals = 0;
  while (i < word.length && word[i]! >= 'A' && word[i]! <= 'Z') {
    capitals++;
    i++;
  }
  let smalls = 0;
  while (i < word.length && word[i]! >= 'a' && word[i]! <= 'z') {
    smalls++;
    i++;
  }
  // `ModelV3`: a word may end in a version tag.
  if (smalls > 0 && i + 1 < word.length && word[i]! >= 'A' && word[i]! <= 'Z' && word[i + 1]! >= '0' && word[i + 1]! <= '9') i++;
  let digits = 0;
  while (i < word.length && word[i]! >= '0' && word[i]! <= '9') {
    digits++;
    i++;
  }
  if (i !== word.length || digits > 2) return false;
  if (smalls > 0) return capitals <= 1;
  return capitals >= 1 && capitals <= 5 && (capitals >= 2 || digits >= 1);
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
