import { type ClassCounts, type Piece, applyPass, placeholder } from './pieces.js';
import { knownShapeIn, looksGenerated, printableFromHex } from './secrets.js';

/** Shannon entropy in bits per character. */
export function shannonEntropy(text: string): number {
  const freq = new Map<string, number>();
  for (const ch of text) freq.set(ch, (freq.get(ch) ?? 0) + 1);
  let bits = 0;
  const n = text.length;
  for (const count of freq.values()) {
    const p = count / n;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/**
 * Entropy threshold for a token of length n: a random string cannot reach more than
 * log2(n) bits per char, so short tokens get a proportionally lower bar; long ones
 * are capped at 4.6 (random alphanumerics reach ~5.5, English-like identifiers ~3.9).
 */
export function entropyThreshold(n: number): number {
  return Math.min(0.85 * Math.log2(n), 4.6);
}

/** How many digits, small and capital letters a token holds, and how often neighbours change between those and other characters. */
function composition(token: string): { digits: number; lower: number; upper: number; switches: number } {
  const counts = [0, 0, 0, 0];
  let switches = 0;
  let previous = -1;
  for (const ch of token) {
    const cls = ch >= '0' && ch <= '9' ? 0 : ch >= 'a' && ch <= 'z' ? 1 : ch >= 'A' && ch <= 'Z' ? 2 : 3;
    counts[cls]!++;
    if (previous !== -1 && cls !== previous) switches++;
    previous = cls;
  }
  return { digits: counts[0]!, lower: counts[1]!, upper: counts[2]!, switches };
}

/** Generated tokens switch character class often; camelCase and snake_case words rarely. */
export function looksRandom(token: string): boolean {
  const n = token.length;
  if (n < 20) return false;
  const { digits, lower, upper, switches } = composition(token);
  if (lower + upper < 4) return false;
  if (digits === 0 && (lower === 0 || upper === 0)) return false;
  if (switches < 0.3 * n) return false;
  if (digits === 0 && vowelShare(token) >= 0.3) return false;
  if (digits <= 0.2 * n && camelCaseWords(token)) return false;
  if (longestMixedSegment(token) < 16) return false;
  return shannonEntropy(token) >= entropyThreshold(n);
}

/**
 * `VgMultiFieldsRefWithSort`, `getJSDocCommentsAndTags`, `isES2015OrLaterName`: words of three
 * or more letters, acronyms and numbers, nearly all words with a vowel. Random letters change
 * case every two characters or so, which makes humps too short and too often vowel-less.
 */
function camelCaseWords(token: string): boolean {
  const parts = token.split(/[-_]+/).filter((p) => p.length > 0);
  const segments: string[] = [];
  for (const part of parts) {
    const found = part.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+/g) ?? [];
    // Every character must belong to a word, an acronym or a number.
    if (found.join('') !== part) return false;
    segments.push(...found);
  }
  const words = segments.filter((s) => !/^[0-9]+$/.test(s));
  if (words.length < 3 || segments.some((s) => /^[0-9]{5,}$/.test(s))) return false;
  const acronyms = words.filter((s) => /^[A-Z]+$/.test(s));
  if (acronyms.some((s) => s.length > 5) || acronyms.length > 0.4 * words.length) return false;
  if (words.filter((s) => s.length === 1).length > Math.max(1, 0.1 * words.length)) return false;
  // Words of three or more letters carry a name (`for`, `Each`, `Child`; `In`, `JS` say little).
  const long = words.filter((s) => s.length >= 3);
  const letters = words.reduce((sum, s) => sum + s.length, 0);
  const inLong = long.reduce((sum, s) => sum + s.length, 0);
  const voweled = long.filter((s) => /[aeiouy]/i.test(s)).length;
  return long.length >= 2 && inLong >= 0.6 * letters && voweled >= (2 / 3) * long.length;
}

/** Share of vowels among letters: ~0.38 in English words, ~0.19 in random letters. */
function vowelShare(token: string): number {
  const letters = token.replace(/[^A-Za-z]/g, '');
  if (letters.length === 0) return 0;
  return (letters.match(/[aeiouAEIOU]/g)?.length ?? 0) / letters.length;
}

/**
 * `--max-old-space-size=4096` or a pod name `api-7c9d8f6b5d-x2k8p` is words and short
 * ids joined by separators; a generated key has a long unbroken random run.
 */
function longestMixedSegment(token: string): number {
  return token.split(/[-_=.]+/).reduce((longest, segment) => Math.max(longest, segment.length), 0);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX = /^(?:0x)?[0-9a-f]+$/i;
/** Ids of messages, tool calls and requests, and subresource-integrity hashes. */
const ID_PREFIXES =
  /^(?:msg_|msgbatch_|toolu_|srvtoolu_|call_|resp_|req_|chatcmpl-|run_|thread_|asst_|fc_|rs_|ws_|item_|file_|file-|batch_|ft:|org-|proj_|evt_|conv-|sha1-|sha256-|sha384-|sha512-|agent-)/;

// Runs of base64/url-safe characters; `.` and `~` end a token (file names, versions).
const TOKEN = /(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{20,}(?![A-Za-z0-9+/=_-])/g;
const LONG_BLOB = 200;

/**
 * `Code_contained_in_a_class_is_evaluated_in_…`: a long name made of words joined by `_` or
 * `-` (random base64url data has one separator in 32 characters, in long runs between).
 */
function isJoinedWords(token: string): boolean {
  const parts = token.split(/[_-]+/).filter((p) => p.length > 0);
  if (parts.length < 10) return false;
  const wordy = parts.filter((p) => /^[A-Za-z]{1,24}$|^[0-9]{1,4}$/.test(p)).length;
  return wordy >= 0.9 * parts.length;
}

function isDataBlob(token: string): boolean {
  if (token.length < LONG_BLOB || isJoinedWords(token)) return false;
  const { digits, lower, upper } = composition(token);
  return digits > 0 && upper > 0 && lower > 0;
}

/** Whether a token is an identifier we keep on purpose (UUID, hash, message id…). */
export function isKnownIdentifier(token: string): boolean {
  if (UUID.test(token) || HEX.test(token) || ID_PREFIXES.test(token)) return true;
  // A path (`a/b/c`) whose parts are each plain words.
  if (token.includes('/')) {
    const parts = token.split('/').filter((p) => p.length > 0);
    if (parts.length >= 2 && parts.every((p) => p.length < 20 || !looksRandom(p))) return !looksRandom(parts.join(''));
  }
  return false;
}

/**
 * Random-looking tokens of 20+ characters → `<SECRET:high_entropy>`; base64 runs of
 * 200+ characters → `<BASE64_DATA>` (images, provider signatures, encrypted blobs).
 * Pure hex, UUIDs and known id prefixes are kept: hashes and ids are everywhere in
 * coding sessions, and a hex secret is named where it appears (caught by assignments).
 */
export function redactHighEntropy(input: Piece[], counts: ClassCounts): Piece[] {
  return applyPass(input, TOKEN, (match) => {
    const token = match[0];
    if (HEX.test(token)) {
      // Hashes stay; a hex string that spells out a key (`736b2d616e742d…`) does not.
      const decoded = printableFromHex(token);
      if (decoded === null) return null;
      const kind = knownShapeIn(decoded) ?? (decoded.length >= 20 && !/\s/.test(decoded) && looksGenerated(decoded) ? 'hex_encoded' : null);
      return kind === null ? null : [placeholder(`<SECRET:${kind}>`, `secret:${kind}`, counts)];
    }
    if (UUID.test(token)) return null;
    if (isDataBlob(token)) return [placeholder('<BASE64_DATA>', 'base64_data', counts)];
    if (isKnownIdentifier(token)) return null;
    return looksRandom(token.replace(/^[=_-]+|[=_-]+$/g, '')) ? [placeholder('<SECRET:high_entropy>', 'secret:high_entropy', counts)] : null;
  });
}
