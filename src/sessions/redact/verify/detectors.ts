// The account names are shared data; the detectors that use them are still written apart.
import { SYSTEM_ACCOUNTS } from '../paths.js';
import { isGeneratedToken } from './entropy-check.js';

/**
 * The verifier's detectors. They are written separately from the redactor's rules on
 * purpose (character scanning instead of the redactor's regex tables), so a bug in one
 * is unlikely to hide the same leak from the other. Each returns spans of `text`.
 */
export interface Hit {
  kind: string;
  start: number;
  end: number;
}

const isDigit = (c: number) => c >= 48 && c <= 57;
const isUpper = (c: number) => c >= 65 && c <= 90;
const isLower = (c: number) => c >= 97 && c <= 122;
const isAlnum = (c: number) => isDigit(c) || isUpper(c) || isLower(c);
const isWordish = (c: number) => isAlnum(c) || c === 95 /* _ */ || c === 45; /* - */
export const isB64 = (c: number) => isAlnum(c) || c === 43 || c === 47 || c === 61 || c === 95 || c === 45; // + / = _ -

type Tail = 'alnum' | 'word' | 'upper-digit' | 'b64' | 'path' | 'hex';
const isHexDigit = (c: number) => isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
const tailTest: Record<Tail, (c: number) => boolean> = {
  hex: isHexDigit,
  alnum: isAlnum,
  word: isWordish,
  'upper-digit': (c) => isUpper(c) || isDigit(c),
  b64: isB64,
  path: (c) => isWordish(c) || c === 47,
};

interface PrefixSpec {
  prefix: string;
  kind: string;
  tail: Tail;
  min: number;
  max?: number;
  /** The prefix may sit inside a URL (no left-edge check). */
  anywhere?: boolean;
  check?: (token: string) => boolean;
}

/** One rule for the published prefixes of one kind of token. */
type PrefixRule = Omit<PrefixSpec, 'prefix'> & { prefixes: string[] };

function digitCount(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (isDigit(text.charCodeAt(i))) n++;
  return n;
}

/**
 * Calls `visit` at each place `needle` stands in `text`, left to right. The search goes on from
 * the position `visit` returns (the end of a span it took), else `step` characters after the place.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a visitor returns where to search on, or nothing
export function eachIndexOf(text: string, needle: string, step: number, visit: (at: number) => number | void): void {
  let from = 0;
  for (;;) {
    const at = text.indexOf(needle, from);
    if (at < 0) return;
    from = visit(at) ?? at + step;
  }
}

const PREFIX_RULES: PrefixRule[] = [
  { prefixes: ['sk-ant-'], kind: 'anthropic_key', tail: 'word', min: 20 },
  { prefixes: ['sk-or-'], kind: 'openrouter_key', tail: 'word', min: 20 },
  { prefixes: ['sk-proj-', 'sk-svcacct-', 'sk-admin-'], kind: 'openai_key', tail: 'word', min: 20 },
  { prefixes: ['sk-'], kind: 'sk_api_key', tail: 'word', min: 20, check: (t) => digitCount(t) >= 2 },
  { prefixes: ['AIza'], kind: 'google_api_key', tail: 'word', min: 35 },
  { prefixes: ['ya29.'], kind: 'google_oauth_token', tail: 'word', min: 20 },
  { prefixes: ['GOCSPX-'], kind: 'google_oauth_secret', tail: 'word', min: 20 },
  { prefixes: ['hf_', 'api_org_'], kind: 'huggingface_token', tail: 'alnum', min: 30 },
  { prefixes: ['gsk_'], kind: 'groq_key', tail: 'alnum', min: 40 },
  { prefixes: ['xai-'], kind: 'xai_key', tail: 'alnum', min: 40 },
  { prefixes: ['tgp_v1_'], kind: 'together_key', tail: 'word', min: 20 },
  { prefixes: ['r8_'], kind: 'replicate_token', tail: 'alnum', min: 30 },
  { prefixes: ['pplx-'], kind: 'perplexity_key', tail: 'alnum', min: 40 },
  { prefixes: ['AKIA', 'ASIA', 'ABIA', 'ACCA'], kind: 'aws_access_key_id', tail: 'upper-digit', min: 16, max: 16 },
  { prefixes: ['FwoGZXIvYXdz', 'IQoJb3JpZ2lu'], kind: 'aws_session_token', tail: 'b64', min: 40 },
  { prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], kind: 'github_token', tail: 'alnum', min: 36 },
  { prefixes: ['github_pat_'], kind: 'github_token', tail: 'word', min: 50 },
  { prefixes: ['glpat-', 'gldt-', 'glrt-'], kind: 'gitlab_token', tail: 'word', min: 20 },
  { prefixes: ['xoxb-', 'xoxp-', 'xoxa-', 'xoxe-', 'xoxr-', 'xoxs-', 'xoxo-', 'xapp-'], kind: 'slack_token', tail: 'word', min: 10 },
  { prefixes: ['hooks.slack.com/services/', 'hooks.slack.com/workflows/'], kind: 'slack_webhook', tail: 'path', min: 10, anywhere: true },
  { prefixes: ['discord.com/api/webhooks/'], kind: 'discord_webhook', tail: 'path', min: 10, anywhere: true },
  { prefixes: ['sk_live_', 'rk_live_', 'sk_test_', 'rk_test_'], kind: 'stripe_key', tail: 'alnum', min: 16 },
  { prefixes: ['whsec_'], kind: 'stripe_key', tail: 'alnum', min: 20 },
  { prefixes: ['npm_'], kind: 'npm_token', tail: 'alnum', min: 36, max: 36 },
  { prefixes: ['pypi-AgE'], kind: 'pypi_token', tail: 'word', min: 50 },
  { prefixes: ['dckr_pat_'], kind: 'docker_token', tail: 'word', min: 20 },
  { prefixes: ['dop_v1_'], kind: 'digitalocean_token', tail: 'alnum', min: 64 },
  { prefixes: ['shpat_'], kind: 'shopify_token', tail: 'alnum', min: 32 },
  { prefixes: ['lin_api_'], kind: 'linear_key', tail: 'alnum', min: 32 },
  { prefixes: ['SK'], kind: 'twilio_api_key', tail: 'hex', min: 32, max: 32 },
];

/** One spec per prefix, in the rules' order (an earlier spec claims a position first). */
const PREFIXES: PrefixSpec[] = PREFIX_RULES.flatMap(({ prefixes, ...rule }) => prefixes.map((prefix) => ({ prefix, ...rule })));

/** Tokens that start with a provider's published prefix. */
export function findPrefixedTokens(text: string): Hit[] {
  const hits: Hit[] = [];
  const claimed = new Set<number>();
  for (const spec of PREFIXES) {
    eachIndexOf(text, spec.prefix, 1, (at) => {
      if (claimed.has(at)) return;
      if (!spec.anywhere && at > 0 && isWordish(text.charCodeAt(at - 1))) return;
      const end = valueAfter(text, at + spec.prefix.length, tailTest[spec.tail]);
      const tail = end - at - spec.prefix.length;
      if (tail < spec.min || (spec.max !== undefined && tail > spec.max)) return;
      const token = text.slice(at, end);
      if (spec.check !== undefined && !spec.check(token)) return;
      const kind = spec.kind === 'sk_api_key' && token.includes('T3BlbkFJ') ? 'openai_key' : spec.kind;
      hits.push({ kind, start: at, end });
      claimed.add(at);
    });
  }
  hits.push(...findJwts(text), ...findTelegramTokens(text));
  return hits;
}

function findJwts(text: string): Hit[] {
  const hits: Hit[] = [];
  eachIndexOf(text, 'eyJ', 3, (at) => {
    if (at > 0 && isWordish(text.charCodeAt(at - 1))) return;
    let end = at;
    let dots = 0;
    const segments = [0];
    while (end < text.length) {
      const c = text.charCodeAt(end);
      if (c === 46 /* . */) {
        if (dots === 2) break;
        dots++;
        segments.push(0);
      } else if (isWordish(c)) {
        segments[dots]!++;
      } else break;
      end++;
    }
    if (dots === 2 && segments[0]! >= 10 && segments[1]! >= 10 && text.startsWith('eyJ', at + segments[0]! + 1)) {
      hits.push({ kind: 'jwt', start: at, end });
      return end;
    }
  });
  return hits;
}

function findTelegramTokens(text: string): Hit[] {
  const hits: Hit[] = [];
  eachIndexOf(text, ':AA', 1, (at) => {
    const start = valueBefore(text, at, isDigit);
    const end = valueAfter(text, at + 1, isWordish);
    if (at - start >= 8 && at - start <= 10 && end - at - 1 >= 35) hits.push({ kind: 'telegram_bot_token', start, end });
  });
  return hits;
}

const SSH_PRIVATE_TYPES = ['OPENSSH', 'RSA', 'DSA', 'EC'];

/** PEM blocks and ssh public keys. */
export function findKeys(text: string): Hit[] {
  const hits: Hit[] = [];
  eachIndexOf(text, 'PRIVATE KEY', 11, (at) => {
    const head = text.slice(Math.max(0, at - 40), at);
    const begin = head.lastIndexOf('BEGIN ');
    if (begin < 0) return;
    const type = head.slice(begin + 6).trim();
    const kind = SSH_PRIVATE_TYPES.includes(type) ? 'ssh_key' : 'private_key';
    const endMarker = text.indexOf('END ', at);
    const end = endMarker < 0 ? Math.min(text.length, at + 4000) : endMarker + 4;
    hits.push({ kind, start: at - (head.length - begin), end });
    return end;
  });
  for (const marker of ['ssh-rsa', 'ssh-ed25519', 'ssh-dss', 'ecdsa-sha2-nistp', 'sk-ssh-ed25519@openssh.com']) {
    eachIndexOf(text, marker, marker.length, (at) => {
      const cursor = valueAfter(text, at + marker.length, isAlnum); // nistp256
      const gap = valueAfter(text, cursor, (c) => c === 32 || c === 9);
      if (gap === cursor || !text.startsWith('AAAA', gap)) return;
      const end = valueAfter(text, gap, isB64);
      if (end - gap >= 24) hits.push({ kind: 'ssh_key', start: at, end });
    });
  }
  for (const marker of ['BEGIN PUBLIC KEY', 'BEGIN RSA PUBLIC KEY', 'BEGIN SSH2 PUBLIC KEY', 'BEGIN OPENSSH PUBLIC KEY']) {
    eachIndexOf(text, marker, marker.length, (at) => {
      hits.push({ kind: 'ssh_key', start: at, end: Math.min(text.length, at + marker.length + 64) });
    });
  }
  return hits;
}

const STAND_IN_WORDS = new Set(['password', 'passwd', 'secret', 'token', 'changeme', 'null', 'none', 'undefined', '...', 'true', 'false']);
const STAND_IN_STARTS = ['example', 'placeholder', 'redacted', 'dummy', 'xxxx', 'your_', 'your-', 'process.env', 'os.environ', 'os.getenv'];

/**
 * `request.headers.authorization`, `this.cloud?.secrets`: names of code joined by `.` (or `?.`).
 * A name is camelCase, PascalCase, snake_case or all capitals — a capital inside a name is
 * followed by a small letter or a digit — so `vbL.rfkzKTfx_` (a password) is not one.
 */
export function looksLikeMemberAccess(value: string): boolean {
  const parts = value.replace(/\?\./g, '.').split('.');
  if (parts.length < 2) return false;
  return parts.every((name) => {
    let part = name;
    if (part.startsWith('#')) part = part.slice(1); // a private field (`this.#client`)
    if (part.length === 0 || !/^[A-Za-z_$][\w$]*$/.test(part)) return false;
    if (/^[A-Z0-9_]+$/.test(part)) return true;
    for (let i = 1; i < part.length; i++) {
      const upper = part[i]! >= 'A' && part[i]! <= 'Z';
      const next = part[i + 1] ?? '';
      if (upper && !((next >= 'a' && next <= 'z') || (next >= '0' && next <= '9'))) return false;
      if (part[i] === '_' && i === part.length - 1) return false;
    }
    return true;
  });
}

/** Whether a value is one of our placeholders, a variable or an obvious stand-in. */
export function isStandIn(value: string): boolean {
  if (value.length === 0) return true;
  const first = value[0]!;
  if (first === '<' || first === '$' || first === '{' || first === '%' || first === '*' || first === '[' || first === '.') return true;
  // Member access in code (`request.headers.authorization`).
  if (looksLikeMemberAccess(value) && !/\d/.test(value)) return true;
  const lower = value.toLowerCase();
  if (STAND_IN_WORDS.has(lower)) return true;
  return STAND_IN_STARTS.some((start) => lower.startsWith(start));
}

/** `scheme://user:password@host` with a real password. */
export function findUrlCredentials(text: string): Hit[] {
  const hits: Hit[] = [];
  eachIndexOf(text, '://', 3, (at) => {
    const start = at + 3;
    let end = start;
    while (end < text.length) {
      const ch = text[end]!;
      if (ch === '/' || ch === '?' || ch === '#' || ch === ' ' || ch === '"' || ch === "'" || ch === '\n' || ch === '\\') break;
      end++;
    }
    // A password written with `?` or `#` unencoded (`https://u:p?ss@host`): the authority runs to the `@`.
    let at2 = end;
    while (at2 < text.length && at2 - start < 512 && !' \t\n"\'\\/@'.includes(text[at2]!)) at2++;
    if (text[at2] === '@' && /[?#]/.test(text.slice(end, at2)) && text.slice(start, end).includes(':')) end = at2 + 1;
    const authority = text.slice(start, end);
    const atSign = authority.lastIndexOf('@');
    if (atSign < 0) return;
    const userinfo = authority.slice(0, atSign);
    // The redactor's own placeholders (`<SECRET:github_token>`) hold a colon that is not
    // the user/password separator.
    const colon = userinfo.replace(/<[A-Z_]+(?::[a-z0-9_]+)?>/g, (p) => '_'.repeat(p.length)).indexOf(':');
    if (colon < 0) return;
    const password = userinfo.slice(colon + 1);
    // (In a URL `a.b` is text, not member access.)
    if ((isStandIn(password) && !looksLikeMemberAccess(password)) || password.startsWith('<SECRET')) return;
    hits.push({ kind: 'password', start: start + colon + 1, end: start + atSign });
  });
  return hits;
}

function valueAfter(text: string, start: number, allowed: (c: number) => boolean): number {
  let end = start;
  while (end < text.length && allowed(text.charCodeAt(end))) end++;
  return end;
}

/** Where the run of `allowed` characters that ends at `end` starts. */
function valueBefore(text: string, end: number, allowed: (c: number) => boolean): number {
  let start = end;
  while (start > 0 && allowed(text.charCodeAt(start - 1))) start--;
  return start;
}

const headerValueChar = (c: number) => isAlnum(c) || c === 46 || c === 95 || c === 126 || c === 43 || c === 47 || c === 61 || c === 58 || c === 45;

/** `Authorization:` headers, bare `Bearer` tokens and api-key headers. */
export function findAuthHeaders(text: string): Hit[] {
  const hits: Hit[] = [];
  const lower = text.toLowerCase();
  const scan = (needle: string, kind: string, min: number, schemes: boolean) => {
    eachIndexOf(lower, needle, needle.length, (at) => {
      let cursor = at + needle.length;
      let separated = !schemes;
      while (cursor < text.length && ' \t"\'\\:='.includes(text[cursor]!)) {
        if (text[cursor] === ':' || text[cursor] === '=') separated = true;
        cursor++;
      }
      if (!separated) return;
      if (schemes) {
        for (const scheme of ['bearer ', 'basic ', 'token ', 'bot ', 'digest ']) {
          if (lower.startsWith(scheme, cursor)) {
            cursor += scheme.length;
            while (text[cursor] === ' ') cursor++;
            break;
          }
        }
      }
      const end = valueAfter(text, cursor, headerValueChar);
      const value = text.slice(cursor, end);
      if (end - cursor >= min && !isStandIn(value)) hits.push({ kind, start: cursor, end });
    });
  };
  scan('authorization', 'authorization', 8, true);
  scan('bearer ', 'bearer_token', 16, false);
  for (const header of ['x-api-key', 'x-goog-api-key', 'x-auth-token', 'private-token', 'api-key:']) scan(header, 'api_key_header', 12, false);
  for (const field of ['accountkey=', 'sharedaccesskey=', 'sharedaccesssignature=', '&sig=', '?sig=']) scan(field, 'azure_storage_key', 8, false);
  return hits;
}

const SECRET_WORDS = [
  'secret',
  'password',
  'passwd',
  'passphrase',
  'token',
  'apikey',
  'api_key',
  'api-key',
  'accesskey',
  'access_key',
  'privatekey',
  'private_key',
  'credential',
  'pwd',
  'dsn',
];
const HARMLESS_NAMES = [
  'max_tokens',
  'tokens',
  'token_count',
  'token_type',
  'tokenizer',
  'token_usage',
  'input_tokens',
  'output_tokens',
  'public_key',
  'primary_key',
  'sort_key',
  'cache_key',
  'key_id',
  'password_hash',
  'secret_name',
  'tokenize',
  'next_token',
  'tokenid',
];

// A name that describes a secret rather than holding one (`TOKEN_HEADER = 'x-echolens-token'`).
const DESCRIBING_SUFFIXES = [
  '_header',
  '_name',
  '_field',
  '_param',
  '_env',
  '_var',
  '_prefix',
  '_path',
  '_file',
  '_url',
  '_type',
  '_label',
  '_kind',
  '_length',
  '_ttl',
];

function isSecretishName(name: string): boolean {
  // camelCase as snake_case: `credentialSourceType` → `credential_source_type`.
  const lower = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/-/g, '_');
  if (lower === 'oauth' || lower.endsWith('_oauth')) return false;
  if (DESCRIBING_SUFFIXES.some((suffix) => lower.endsWith(suffix))) return false;
  for (const harmless of HARMLESS_NAMES) if (lower === harmless || lower.endsWith(`_${harmless}`) || lower.endsWith(harmless.replace(/_/g, ''))) return false;
  for (const word of SECRET_WORDS) if (lower.includes(word.replace(/-/g, '_'))) return true;
  return lower.endsWith('_key') || lower.endsWith('auth');
}

/** Two to eight words without closing punctuation: a passphrase, not a sentence. */
function isPassphrase(value: string): boolean {
  const trimmed = value.trim();
  const words = trimmed.split(/\s+/).length;
  const lastChar = trimmed[trimmed.length - 1] ?? '';
  return words >= 2 && words <= 8 && trimmed.length <= 128 && !'.?!:'.includes(lastChar);
}

const nameChar = (c: number) => isAlnum(c) || c === 95 || c === 45 || c === 46;

/** `NAME=value`, `"name": "value"`, `name: value` where the name says "secret". */
export function findSecretAssignments(text: string): Hit[] {
  const hits: Hit[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 61 /* = */ && c !== 58 /* : */) {
      i++;
      continue;
    }
    // Walk back over quotes/space to the name.
    let nameEnd = i;
    while (nameEnd > 0 && ' \t"\'\\'.includes(text[nameEnd - 1]!)) nameEnd--;
    let nameStart = nameEnd;
    while (nameStart > 0 && nameEnd - nameStart < 64 && nameChar(text.charCodeAt(nameStart - 1))) nameStart--;
    const name = text.slice(nameStart, nameEnd);
    i++;
    if (name.length < 3 || !isSecretishName(name)) continue;
    // A segment of a URN or a URL (`urn:ietf:params:oauth:token-type:jwt`), not a name.
    if (nameStart > 0 && (text[nameStart - 1] === ':' || text[nameStart - 1] === '/')) continue;
    let cursor = i;
    if (text[cursor] === '=') cursor++; // :=
    while (cursor < text.length && (text[cursor] === ' ' || text[cursor] === '\t')) cursor++;
    let quoted = false;
    while (cursor < text.length && (text[cursor] === '\\' || text[cursor] === '"' || text[cursor] === "'" || text[cursor] === '`')) {
      quoted = true;
      cursor++;
    }
    let end = cursor;
    // Values longer than 1,024 characters are not credentials; stop looking there.
    const limit = Math.min(text.length, cursor + 1025);
    if (quoted) {
      while (end < limit && !'"\'`\\\n'.includes(text[end]!)) end++;
    } else {
      while (end < limit && !' \t\n"\'`;,&|)(<>\\'.includes(text[end]!)) end++;
    }
    const value = text.slice(cursor, end);
    const min = /pass|pwd/i.test(name) ? 4 : 8;
    const passphrase = quoted && /pass|pwd/i.test(name) && isPassphrase(value);
    if (value.length < min || value.length > 1024 || isStandIn(value) || (/\s/.test(value) && !passphrase)) continue;
    // An enum member names itself (`ClientSecretPost = "ClientSecretPost"`); a URL or a template is not a secret.
    if (value.toLowerCase() === name.toLowerCase() || value.includes('${') || /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) continue;
    // Words joined by `-`/`_`/`.` in lower case (`x-echolens-token`): a name, not a token.
    if (!/pass|pwd/i.test(name) && /^[a-z]+(?:[-_.][a-z]+)+$/.test(value)) continue;
    // `--from-literal=password=x`: the value of a flag, not a name in code.
    const flagValue = !quoted && nameStart > 0 && text[nameStart - 1] === '=';
    // Shell and env files have no bare names: `DB_PASSWORD=zZjDVx` is a literal. So is a password
    // whose letters change case the way no identifier does (`password: rZOdAo`).
    const envLiteral = !quoted && /^[A-Z][A-Z0-9_]*$/.test(name) && text[nameEnd] === '=' && nameEnd === i - 1;
    const oddCase =
      /pass|pwd/i.test(name) &&
      /^[A-Za-z]{6,}$/.test(value) &&
      /[a-z]/.test(value) &&
      /[A-Z]/.test(value) &&
      !/^(?:[a-z]+|[A-Z][a-z]+)(?:[A-Z][a-z]+)*$/.test(value);
    // A YAML/INI line of its own (`  password: apcird`): a bare scalar is a literal.
    const lineBefore = text.slice(Math.max(0, text.lastIndexOf('\n', nameStart - 1) + 1), nameStart);
    // (Also a whole JSON string: `"content":"password: apcird"`.)
    const ownLine = /pass|pwd/i.test(name) && /(?:^|")[ \t]*(?:-[ \t]+)?$/.test(lineBefore) && (end === text.length || '\r\n"\\'.includes(text[end]!));
    if (!quoted && !flagValue && !envLiteral && !oddCase && !ownLine) {
      // Unquoted code (`apiKey: config.apiKey`, `token=get_token`, `this.cloud?.secrets`) is not a literal.
      const chain = value.replace(/\?\./g, '.');
      const member = chain.includes('.') ? looksLikeMemberAccess(chain) : /^[A-Za-z_$][\w$]*$/.test(chain);
      if (member && (digitCount(chain) === 0 || chain.split('.').length >= 3)) continue;
      if (text[end] === '(' || /[[\]{}]/.test(value)) continue;
      if (!(digitCount(value) > 0 && /[A-Za-z]/.test(value)) && value.length < 16) continue;
    }
    hits.push({ kind: 'secret_assignment', start: cursor, end });
    i = end;
  }
  return hits;
}

const EMAIL_LOCAL = (c: number) => isAlnum(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
const DOMAIN = (c: number) => isAlnum(c) || c === 46 || c === 45;
const CODE_TLDS = [
  'js',
  'ts',
  'py',
  'json',
  'md',
  'png',
  'jpg',
  'svg',
  'css',
  'html',
  'txt',
  'lock',
  'map',
  'tsx',
  'jsx',
  'sh',
  'yml',
  'yaml',
  'toml',
  'rs',
  'go',
  'gif',
  'webp',
  'mjs',
  'cjs',
  'vue',
  'xml',
  'node',
  'wasm',
];

/** Addresses `local@domain.tld` (not `git@host:` remotes, not `icon@2x.png`). */
export function findEmails(text: string): Hit[] {
  const hits: Hit[] = [];
  eachIndexOf(text, '@', 1, (at) => {
    const start = valueBefore(text, at, EMAIL_LOCAL);
    let end = valueAfter(text, at + 1, DOMAIN);
    while (end > at + 1 && (text[end - 1] === '.' || text[end - 1] === '-')) end--;
    // `scheme://user:password@host`: the password check owns that text.
    if (start > 0 && text[start - 1] === ':') {
      const scheme = text.lastIndexOf('://', start);
      if (scheme >= 0 && start - scheme < 256 && !/[/\s]/.test(text.slice(scheme + 3, start - 1))) return;
    }
    const local = text.slice(start, at);
    const domain = text.slice(at + 1, end);
    const dot = domain.lastIndexOf('.');
    if (local.length === 0 || local === 'git' || dot <= 0) return;
    const tld = domain.slice(dot + 1);
    // Letters, or an internationalised TLD in punycode (xn--p1ai).
    if (tld.length < 2 || !/^(?:[A-Za-z]+|xn--[A-Za-z0-9-]{2,59})$/.test(tld) || CODE_TLDS.includes(tld.toLowerCase())) return;
    hits.push({ kind: 'email', start, end });
  });
  return hits;
}

/** The name at `start` (at most 64 characters; dash-encoded folders stop at `-`). */
function usernameAt(text: string, start: number, dashEncoded = false): string {
  const limit = Math.min(text.length, start + 64);
  let end = start;
  while (end < limit && (isAlnum(text.charCodeAt(end)) || (dashEncoded ? false : '._-'.includes(text[end]!)))) end++;
  return text.slice(start, end);
}

/** Home folders whose username was not replaced, in every OS form. */
export function findHomePaths(text: string): Hit[] {
  const hits: Hit[] = [];
  const check = (nameStart: number, markerStart: number) => {
    const name = usernameAt(text, nameStart);
    if (name.length === 0 || SYSTEM_ACCOUNTS.has(name.toLowerCase())) return;
    hits.push({ kind: 'home_path', start: markerStart, end: nameStart + name.length });
  };
  for (const marker of ['/Users/', '/home/']) {
    eachIndexOf(text, marker, 1, (at) => {
      const before = at > 0 ? text.charCodeAt(at - 1) : 32;
      // `/home/` inside a URL path (site.com/home/…) is not a home folder.
      if (isAlnum(before) && !text.slice(Math.max(0, at - 4), at).endsWith('/var')) return;
      check(at + marker.length, at);
    });
  }
  // Windows: `X:` then one or more backslashes (or a slash), `Users`, separator.
  eachIndexOf(text, 'Users', 5, (at) => {
    let back = at;
    while (back > 0 && (text[back - 1] === '\\' || text[back - 1] === '/')) back--;
    if (back === at || back < 2 || text[back - 1] !== ':' || !/[A-Za-z]/.test(text[back - 2]!)) return;
    let next = at + 5;
    while (next < text.length && (text[next] === '\\' || text[next] === '/')) next++;
    if (next === at + 5) return;
    check(next, back - 2);
  });
  for (const marker of ['-Users-', '-home-']) {
    eachIndexOf(text, marker, 1, (at) => {
      if (at > 0 && isAlnum(text.charCodeAt(at - 1))) return;
      const name = usernameAt(text, at + marker.length, true);
      if (name.length > 0 && !SYSTEM_ACCOUNTS.has(name.toLowerCase())) {
        hits.push({ kind: 'home_path', start: at, end: at + marker.length + name.length });
      }
    });
  }
  eachIndexOf(text, '~', 1, (at) => {
    if (at > 0 && (isAlnum(text.charCodeAt(at - 1)) || text[at - 1] === '~')) return;
    const name = usernameAt(text, at + 1);
    const after = text[at + 1 + name.length];
    // Backslashes that escape a quote or a line break (`\"~standard\"` still escaped once) are no path.
    let past = at + 1 + name.length;
    while (text[past] === '\\') past++;
    const escaped =
      after === '\\' && (text[past] === '"' || text[past] === "'" || ((past - at - 1 - name.length) % 2 === 1 && 'nrtbfu'.includes(text[past] ?? ' ')));
    if (name.length > 0 && /^[A-Za-z_]/.test(name) && (after === '/' || (after === '\\' && !escaped)) && !SYSTEM_ACCOUNTS.has(name.toLowerCase())) {
      hits.push({ kind: 'home_path', start: at, end: at + 1 + name.length });
    }
  });
  return hits;
}

function ipv4At(text: string, start: number): number {
  let end = start;
  let dots = 0;
  while (end < text.length && (isDigit(text.charCodeAt(end)) || text[end] === '.')) {
    if (text[end] === '.') dots++;
    end++;
  }
  return dots === 3 ? end : -1;
}

/** Local dev servers with a port, private addresses. */
export function findHosts(text: string): Hit[] {
  const hits: Hit[] = [];
  const lower = text.toLowerCase();
  for (const local of ['localhost:', '127.0.0.1:', '0.0.0.0:']) {
    eachIndexOf(lower, local, 1, (at) => {
      if (at > 0 && (isAlnum(text.charCodeAt(at - 1)) || text[at - 1] === '.')) return;
      const portEnd = valueAfter(text, at + local.length, isDigit);
      if (portEnd > at + local.length) hits.push({ kind: 'host', start: at, end: portEnd });
    });
  }
  for (const prefix of ['10.', '192.168.', '172.']) {
    eachIndexOf(text, prefix, 1, (at) => {
      if (at > 0 && (isAlnum(text.charCodeAt(at - 1)) || text[at - 1] === '.')) return;
      const end = ipv4At(text, at);
      if (end < 0 || (end < text.length && isAlnum(text.charCodeAt(end)))) return;
      const octets = text.slice(at, end).split('.').map(Number);
      if (octets.some((o) => !(o >= 0 && o <= 255))) return;
      if (prefix === '172.' && !(octets[1]! >= 16 && octets[1]! <= 31)) return;
      hits.push({ kind: 'host', start: at, end });
    });
  }
  return hits;
}

export const isLiteralChar = (c: number) => isB64(c) || c === 46 || c === 58; // base64, `.`, `:`
const isQuote = (c: number) => c === 34 || c === 39 || c === 96;

/** The string literal (`"…"`, `'…'`, `` `…` ``) starting at `at`: its body and end, or null. */
function literalAt(text: string, at: number): { body: string; end: number } | null {
  const quote = text.charCodeAt(at);
  if (!isQuote(quote)) return null;
  let end = at + 1;
  while (end < text.length && end - at <= 257 && isLiteralChar(text.charCodeAt(end))) end++;
  if (end === at + 1 || text.charCodeAt(end) !== quote) return null;
  return { body: text.slice(at + 1, end), end: end + 1 };
}

/** A key split into string literals joined by `+`, checked once joined back. */
export function findJoinedLiterals(text: string): Hit[] {
  const hits: Hit[] = [];
  eachIndexOf(text, '+', 1, (plus) => {
    // Walk back over spaces to the closing quote of the literal on the left.
    let left = plus - 1;
    while (left >= 0 && text[left] === ' ') left--;
    if (left < 1 || !isQuote(text.charCodeAt(left))) return;
    let open = left - 1;
    while (open >= 0 && left - open <= 257 && isLiteralChar(text.charCodeAt(open))) open--;
    if (open < 0 || text.charCodeAt(open) !== text.charCodeAt(left)) return;
    const first = literalAt(text, open);
    if (first === null) return;
    const bodies = [first.body];
    let end = first.end;
    for (;;) {
      let cursor = end;
      while (text[cursor] === ' ') cursor++;
      if (text[cursor] !== '+') break;
      cursor++;
      while (text[cursor] === ' ') cursor++;
      const next = literalAt(text, cursor);
      if (next === null) break;
      bodies.push(next.body);
      end = next.end;
    }
    if (bodies.length < 2) return;
    const joined = bodies.join('');
    if (joined.length >= 20 && (findPrefixedTokens(joined).length > 0 || isGeneratedToken(joined))) {
      hits.push({ kind: 'split_key', start: open, end });
    }
    return Math.max(plus + 1, end);
  });
  return hits;
}
