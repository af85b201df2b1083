import {
  type Hit,
  findAuthHeaders,
  findEmails,
  findHomePaths,
  findHosts,
  findKeys,
  findPrefixedTokens,
  findSecretAssignments,
  findUrlCredentials,
} from './detectors.js';
import { isGeneratedToken } from './entropy-check.js';
import { type VerifyTerm, findTerms } from './identity-check.js';

/**
 * Undoes one level of JSON string escaping so a secret written as `\u0073k-…` or a
 * path written as `C:\\Users\\x` is seen as it reads. Unknown escapes stay as they are.
 */
export function unescapeJsonText(text: string): string {
  if (!text.includes('\\')) return text;
  return text.replace(/\\(u[0-9a-fA-F]{4}|["\\/bfnrt])/g, (_, code: string) => {
    switch (code[0]) {
      case 'u':
        return String.fromCharCode(Number.parseInt(code.slice(1), 16));
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'b':
        return '\b';
      case 'f':
        return '\f';
      default:
        return code;
    }
  });
}

const isTokenChar = (c: number) =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 43 || c === 47 || c === 61 || c === 95 || c === 45;

const KEPT_ID_STARTS = ['msg_', 'msgbatch_', 'toolu_', 'srvtoolu_', 'call_', 'resp_', 'req_', 'chatcmpl-', 'run_', 'thread_', 'asst_', 'fc_', 'rs_', 'ws_', 'item_', 'file_', 'file-', 'batch_', 'org-', 'proj_', 'evt_', 'conv-', 'sha1-', 'sha256-', 'sha384-', 'sha512-', 'agent-'];

function isHexOrUuid(token: string): boolean {
  const body = token.startsWith('0x') ? token.slice(2) : token;
  let dashes = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (c === 45) {
      dashes++;
      continue;
    }
    const hex = (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
    if (!hex) return false;
  }
  return dashes === 0 || (dashes === 4 && body.length === 36);
}

function isWordPath(token: string): boolean {
  if (!token.includes('/')) return false;
  const parts = token.split('/').filter((p) => p.length > 0);
  return parts.length >= 2 && !isGeneratedToken(parts.join(''));
}

/** Long random tokens and base64 payloads. */
export function findRandomTokens(text: string): Hit[] {
  const hits: Hit[] = [];
  let i = 0;
  while (i < text.length) {
    if (!isTokenChar(text.charCodeAt(i))) {
      i++;
      continue;
    }
    let end = i;
    while (end < text.length && isTokenChar(text.charCodeAt(end))) end++;
    // A token glued to `.`/`~` is a file name or version, handled as its own words.
    const length = end - i;
    if (length >= 20) {
      const token = text.slice(i, end);
      const trimmed = token.replace(/^[=_-]+|[=_-]+$/g, '');
      if (!isHexOrUuid(trimmed) && !KEPT_ID_STARTS.some((s) => trimmed.startsWith(s))) {
        if (length >= 200 && /[0-9]/.test(token) && /[a-z]/.test(token) && /[A-Z]/.test(token)) {
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
    ...findEmails(plain),
    ...findHomePaths(plain),
    ...findHosts(plain),
    ...findTerms(plain, terms),
    ...findRandomTokens(plain),
  ];
  return dropCovered(hits).map((hit) => ({ ...hit, value: plain.slice(hit.start, hit.end) }));
}

/** Removes a hit that lies inside a more specific one (a key inside its PEM block…). */
function dropCovered(hits: Hit[]): Hit[] {
  const generic = new Set(['high_entropy', 'base64_data', 'secret_assignment']);
  const sorted = [...hits].sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Hit[] = [];
  for (const hit of sorted) {
    const cover = kept.find((k) => k.start <= hit.start && k.end >= hit.end);
    if (cover !== undefined && (generic.has(hit.kind) || !generic.has(cover.kind))) continue;
    kept.push(hit);
  }
  // A specific hit wins over the generic one that covered it first.
  return kept.filter((hit) => !(generic.has(hit.kind) && kept.some((k) => k !== hit && !generic.has(k.kind) && hit.start >= k.start && hit.end <= k.end)));
}
