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

/** Slightly more sensitive than the redactor, so a borderline token left behind is listed. */
export function isGeneratedToken(token: string): boolean {
  const shape = shapeOf(token);
  if (shape.length < 20) return false;
  if (shape.lower + shape.upper < 4) return false;
  if (shape.digits === 0 && (shape.lower === 0 || shape.upper === 0)) return false;
  if (shape.changes / shape.length < 0.28) return false;
  if (shape.digits === 0 && vowelFraction(token) >= 0.32) return false;
  if (longestRun(token) < 12) return false;
  const bar = shape.length >= 64 ? 4.5 : 0.82 * Math.log2(shape.length);
  return bitsPerChar(token) >= bar;
}
