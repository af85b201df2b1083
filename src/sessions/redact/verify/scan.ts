import {
  type Hit,
  findAuthHeaders,
  findJoinedLiterals,
  findEmails,
  findHomePaths,
  findHosts,
  findKeys,
  findPrefixedTokens,
  findSecretAssignments,
  findUrlCredentials,
  isB64,
} from './detectors.js';
import {
  findAuthPairs,
  findCommandPasswords,
  findEncodedPairs,
  findEnvPairs,
  findNetrcPasswords,
  findPgpassLines,
  findPipedPasswords,
  findQueryCredentials,
  findSplitPieces,
} from './credential-forms.js';
import { isGeneratedToken } from './entropy-check.js';
import { type VerifyTerm, findTerms } from './identity-check.js';

const CONTROL_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f' };

/**
 * Undoes one level of JSON string escaping so a secret written as `\u0073k-…` or a
 * path written as `C:\\Users\\x` is seen as it reads. Unknown escapes stay as they are.
 */
export function unescapeJsonText(text: string): string {
  if (!text.includes('\\')) return text;
  return text.replace(/\\(u[0-9a-fA-F]{4}|["\\/bfnrt])/g, (_, code: string) =>
    code[0] === 'u' ? String.fromCharCode(Number.parseInt(code.slice(1), 16)) : (CONTROL_ESCAPES[code] ?? code),
  );
}

const KEPT_ID_STARTS = [
  'msg_',
  'msgbatch_',
  'toolu_',
  'srvtoolu_',
  'call_',
  'resp_',
  'req_',
  'chatcmpl-',
  'run_',
  'thread_',
  'asst_',
  'fc_',
  'rs_',
  'ws_',
  'item_',
  'file_',
  'file-',
  'batch_',
  'org-',
  'proj_',
  'evt_',
  'conv-',
  'sha1-',
  'sha256-',
  'sha384-',
  'sha512-',
  'agent-',
];

function isHexOrUuid(token: string): boolean {
  const body = token.startsWith('0x') ? token.slice(2) : token;
  if (!/^[0-9a-fA-F-]*$/.test(body)) return false;
  const dashes = body.split('-').length - 1;
  return dashes === 0 || (dashes === 4 && body.length === 36);
}

function isWordPath(token: string): boolean {
  if (!token.includes('/')) return false;
  const parts = token.split('/').filter((p) => p.length > 0);
  return parts.length >= 2 && !isGeneratedToken(parts.join(''));
}

/** A long name of words joined by `_`/`-` (`Cannot_find_name_0_Do_you_need_…`), not base64 data. */
function isSnakeName(token: string): boolean {
  let separators = 0;
  let wordChars = 0;
  let longest = 0;
  let run = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c === 95 || c === 45) {
      separators++;
      run = 0;
      continue;
    }
    run++;
    if (run > longest) longest = run;
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) wordChars++;
  }
  return separators >= 10 && longest <= 24 && wordChars >= 0.85 * (token.length - separators);
}

/** Whether a hex string decodes to printable text holding a key (`736b2d…` = `sk-…`). */
function hexSpellsSecret(hex: string): boolean {
  const body = hex.startsWith('0x') ? hex.slice(2) : hex;
  if (body.length < 32 || body.length % 2 !== 0 || body.includes('-')) return false;
  const bytes = Buffer.from(body, 'hex');
  for (const byte of bytes) if (byte < 0x20 || byte > 0x7e) return false;
  const decoded = bytes.toString('latin1');
  if (findPrefixedTokens(decoded).length > 0) return true;
  return decoded.length >= 20 && !decoded.includes(' ') && isGeneratedToken(decoded);
}

/** Long random tokens and base64 payloads. */
export function findRandomTokens(text: string): Hit[] {
  const hits: Hit[] = [];
  let i = 0;
  while (i < text.length) {
    if (!isB64(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let end = i;
    while (end < text.length && isB64(text.charCodeAt(end))) end++;
    // A token glued to `.`/`~` is a file name or version, handled as its own words.
    const length = end - i;
    if (length >= 20) {
      const token = text.slice(i, end);
      const trimmed = token.replace(/^[=_-]+|[=_-]+$/g, '');
      if (isHexOrUuid(trimmed)) {
        if (hexSpellsSecret(trimmed)) hits.push({ kind: 'hex_encoded', start: i, end });
      } else if (!KEPT_ID_STARTS.some((s) => trimmed.startsWith(s))) {
        if (isSnakeName(trimmed)) {
          // A long name of words: neither data nor a key.
        } else if (length >= 200 && /[0-9]/.test(token) && /[a-z]/.test(token) && /[A-Z]/.test(token)) {
          hits.push({ kind: 'base64_data', start: i, end });
        } else if (!isWordPath(trimmed) && isGeneratedToken(trimmed)) {
          hits.push({ kind: 'high_entropy', start: i, end });
        }
      }
    }
    i = end;
  }
  return hits;
}

export interface FoundHit extends Hit {
  value: string;
}

/** Every residual in one piece of text (a hit inside a more specific one is dropped). */
export function scanText(text: string, terms: readonly VerifyTerm[] = []): FoundHit[] {
  const plain = unescapeJsonText(text);
  const hits = [
    ...findKeys(plain),
    ...findPrefixedTokens(plain),
    ...findUrlCredentials(plain),
    ...findAuthHeaders(plain),
    ...findSecretAssignments(plain),
    ...findJoinedLiterals(plain),
    ...findCommandPasswords(plain),
    ...findPgpassLines(plain),
    ...findNetrcPasswords(plain),
    ...findAuthPairs(plain),
    ...findEncodedPairs(plain),
    ...findPipedPasswords(plain),
    ...findQueryCredentials(plain),
    ...findEnvPairs(plain),
    ...findSplitPieces(plain),
    ...findEmails(plain),
    ...findHomePaths(plain),
    ...findHosts(plain),
    ...findTerms(plain, terms),
    ...findRandomTokens(plain),
  ];
  return dropCovered(hits).map((hit) => ({ ...hit, value: plain.slice(hit.start, hit.end) }));
}

const GENERIC_KINDS = new Set(['high_entropy', 'base64_data', 'secret_assignment', 'split_key']);

/**
 * Removes a hit that lies inside another one (a key inside its PEM block, a token inside
 * an assignment), preferring the specific kind over a generic one. One sweep, O(n log n).
 */
function dropCovered(hits: Hit[]): Hit[] {
  const sorted = [...hits].sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Hit[] = [];
  let cover: Hit | null = null;
  for (const hit of sorted) {
    if (cover !== null && hit.end <= cover.end) {
      const hitGeneric = GENERIC_KINDS.has(hit.kind);
      if (hitGeneric || !GENERIC_KINDS.has(cover.kind)) continue;
    }
    kept.push(hit);
    if (cover === null || hit.end > cover.end) cover = hit;
  }
  // A generic hit that contains a specific one is the same finding told twice.
  const specificStarts = kept.filter((h) => !GENERIC_KINDS.has(h.kind)).map((h) => h.start);
  return kept.filter((hit) => {
    if (!GENERIC_KINDS.has(hit.kind)) return true;
    let low = 0;
    let high = specificStarts.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (specificStarts[mid]! < hit.start) low = mid + 1;
      else high = mid;
    }
    const inside = low < specificStarts.length && specificStarts[low]! < hit.end;
    return !inside;
  });
}
