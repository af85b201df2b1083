import { type ClassCounts, type Piece, type ReplacedSpan, applyPass, fixed, keep, placeholder, spliceSpans } from './pieces.js';

// Left/right edges of a token: a key glued to other token characters is not a key.
const L = '(?<![A-Za-z0-9_-])';
const R = '(?![A-Za-z0-9_-])';

interface ShapeRule {
  kind: string;
  /** Lower-case literals one of which must occur for the rule to run (a fast pre-check). */
  hints: string[];
  pattern: RegExp;
  /** Extra check on the matched text (or the `v` group when present). */
  accept?: (value: string) => boolean;
}

function rule(kind: string, hints: string[], source: string, flags = '', accept?: (value: string) => boolean): ShapeRule {
  return accept === undefined ? { kind, hints, pattern: new RegExp(source, `gd${flags}`) } : { kind, hints, pattern: new RegExp(source, `gd${flags}`), accept };
}

function hinted(lower: string, hints: readonly string[]): boolean {
  return hints.some((hint) => lower.includes(hint));
}

/** Random-looking: digits and letters mixed the way generated keys are, not words. */
export function looksGenerated(value: string): boolean {
  let digits = 0;
  let upper = 0;
  let lower = 0;
  for (const ch of value) {
    if (ch >= '0' && ch <= '9') digits++;
    else if (ch >= 'A' && ch <= 'Z') upper++;
    else if (ch >= 'a' && ch <= 'z') lower++;
  }
  return digits >= 2 && (upper >= 2 || value.length >= 32) && lower + upper >= 6;
}

/**
 * Known token shapes, most specific first (sk-ant- before sk-). Each match becomes
 * `<SECRET:kind>`; rules with a `v` group replace only that group and keep the name.
 */
const SHAPE_RULES: ShapeRule[] = [
  rule('anthropic_key', ['sk-ant-'], `${L}sk-ant-[A-Za-z0-9_-]{20,}`),
  rule('openrouter_key', ['sk-or-'], `${L}sk-or-[A-Za-z0-9_-]{20,}`),
  rule('openai_key', ['sk-'], `${L}sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}`),
  rule('openai_key', ['t3blbkfj'], `${L}sk-[A-Za-z0-9]{10,}T3BlbkFJ[A-Za-z0-9]{10,}${R}`),
  rule('sk_api_key', ['sk-'], `${L}sk-[A-Za-z0-9][A-Za-z0-9_-]{19,}${R}`, '', looksGenerated),
  rule('google_api_key', ['aiza'], `${L}AIza[0-9A-Za-z_-]{35}${R}`),
  rule('google_oauth_token', ['ya29.'], `${L}ya29\\.[0-9A-Za-z_-]{20,}`),
  rule('google_oauth_secret', ['gocspx-'], `${L}GOCSPX-[0-9A-Za-z_-]{20,}`),
  rule('huggingface_token', ['hf_', 'api_org_'], `${L}(?:hf|api_org)_[A-Za-z0-9]{30,}${R}`),
  rule('groq_key', ['gsk_'], `${L}gsk_[A-Za-z0-9]{40,}${R}`),
  rule('xai_key', ['xai-'], `${L}xai-[A-Za-z0-9]{40,}${R}`),
  rule('together_key', ['tgp_v1_'], `${L}tgp_v1_[A-Za-z0-9_-]{20,}`),
  rule('replicate_token', ['r8_'], `${L}r8_[A-Za-z0-9]{30,}${R}`),
  rule('perplexity_key', ['pplx-'], `${L}pplx-[A-Za-z0-9]{40,}${R}`),
  rule('aws_access_key_id', ['akia', 'asia', 'abia', 'acca'], `${L}(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}${R}`),
  rule('aws_session_token', ['fwogzxivyxdz', 'iqojb3jpz2lu'], `${L}(?:FwoGZXIvYXdz|IQoJb3JpZ2lu)[A-Za-z0-9/+=]{40,}`),
  rule(
    'aws_secret_access_key',
    ['secret'],
    `(?:aws_?secret_?access_?key|secret_?access_?key|SecretAccessKey)\\\\?["']?\\s*[:=]\\s*\\\\?["']?(?<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])`,
    'i',
  ),
  rule('github_token', ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], `${L}(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}${R}`),
  rule('github_token', ['github_pat_'], `${L}github_pat_[A-Za-z0-9_]{50,}`),
  rule('gitlab_token', ['gl'], `${L}gl(?:pat|dt|rt|ptt|cbt|imt|ft|soat|agent)-[A-Za-z0-9_-]{20,}`),
  rule('slack_token', ['xox'], `${L}xox[abposre]-[A-Za-z0-9-]{10,}`),
  rule('slack_token', ['xapp-'], `${L}xapp-\\d-[A-Za-z0-9-]{10,}`),
  rule('slack_webhook', ['hooks.slack.com'], `https://hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{10,}`),
  rule('discord_webhook', ['discord'], `https://(?:ptb\\.|canary\\.)?discord(?:app)?\\.com/api/webhooks/\\d+/[A-Za-z0-9_-]+`),
  rule('stripe_key', ['_live_', '_test_'], `${L}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}${R}`),
  rule('stripe_key', ['whsec_'], `${L}whsec_[A-Za-z0-9]{20,}${R}`),
  rule('npm_token', ['npm_'], `${L}npm_[A-Za-z0-9]{36}${R}`),
  rule('pypi_token', ['pypi-'], `${L}pypi-AgE[A-Za-z0-9_-]{50,}`),
  rule('sendgrid_key', ['sg.'], `${L}SG\\.[A-Za-z0-9_-]{16,}\\.[A-Za-z0-9_-]{20,}`),
  rule('docker_token', ['dckr_pat_'], `${L}dckr_pat_[A-Za-z0-9_-]{20,}`),
  rule('digitalocean_token', ['_v1_'], `${L}do[por]_v1_[a-f0-9]{64}${R}`),
  rule('shopify_token', ['shp'], `${L}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}${R}`),
  rule('linear_key', ['lin_api_'], `${L}lin_api_[A-Za-z0-9]{32,}${R}`),
  rule('telegram_bot_token', [':aa'], `(?<![A-Za-z0-9_:-])\\d{8,10}:AA[A-Za-z0-9_-]{33}${R}`),
  rule('twilio_api_key', ['sk'], `${L}SK[0-9a-fA-F]{32}${R}`),
  rule('jwt', ['eyj'], `${L}eyJ[A-Za-z0-9_-]{10,}\\.eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]*`),
  rule('azure_storage_key', ['accountkey', 'sharedaccess'], `(?:AccountKey|SharedAccessKey|SharedAccessSignature)=(?<v>[^;"'\\s\\\\]{8,})`, 'i'),
  rule('azure_sas_signature', ['sig='], `[?&]sig=(?<v>[A-Za-z0-9%+/=]{20,})`),
];

const PLACEHOLDER_VALUE =
  /^(?:\$\{?[A-Za-z_]|<[^>]*>$|\{\{|\{[A-Za-z_]|%\(|%s|\*{3,}|x{4,}$|X{4,}$|\.{3}|…|your[_-]|my[_-]?(?:secret|password|token|key)|change[_-]?me$|example|dummy|placeholder|redacted|none$|null$|nil$|true$|false$|undefined$|string$|str$|number$|int$|bool$|bytes$|optional|process\.env|os\.environ|os\.getenv|env\.|env\[|getenv|config\.|settings\.|self\.|this\.|secrets\.|vars\.|import\.meta|password$|passwd$|secret$|token$|<SECRET)/i;

/**
 * A passphrase (`"password": "correct horse battery staple"`): a few words with no
 * sentence punctuation at the end. Only ever asked for values of password-named members.
 */
export function looksLikePassphrase(value: string): boolean {
  const words = value.trim().split(/\s+/);
  return words.length >= 2 && words.length <= 8 && value.length <= 128 && !/[.?!:]$/.test(value.trim()) && !/[\r\n]/.test(value);
}

// One name of code: camelCase, PascalCase, snake_case, UPPER_CASE (a capital is followed by small letters
// unless the whole name is capitals), so `vbL.rfkzKTfx_` is not mistaken for `request.headers`.
const CODE_NAME = /^(?:[a-z_$][a-z0-9_$]*(?:[A-Z][a-z0-9]+)*|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)*|[A-Z][A-Z0-9_]*)$/;

/** `config.apiKey`, `self.password`: member access in code, not a literal. */
export function isMemberAccess(value: string): boolean {
  const parts = value.split('.');
  return parts.length >= 2 && parts.every((part) => CODE_NAME.test(part));
}

/** A value that looks like a real credential and not a variable, type or placeholder. */
function realValue(value: string, minLength: number, spacesAllowed = false, commandLine = false): boolean {
  if (value.length < minLength) return false;
  if (PLACEHOLDER_VALUE.test(value)) return false;
  if (/^(.)\1+$/.test(value)) return false;
  if (/\s/.test(value) && !(spacesAllowed && looksLikePassphrase(value))) return false;
  // Member access in code (`request.headers.authorization`), not a literal.
  // (On a command line `a.b` is a literal: a flag's value is never an expression.)
  if (!commandLine && isMemberAccess(value) && !/\d/.test(value)) return false;
  return true;
}

const STRONG_NAME =
  /(?:^|_)(?:secret|secrets|password|passwd|passphrase|pwd|pass|token|api_?key|apikey|access_?token|auth_?token|refresh_?token|id_?token|session_?token|bearer|private_?key|client_?secret|signing_?key|encryption_?key|master_?key|access_?key|secret_?key|credentials?|auth|dsn|connection_?string|conn_?str|webhook_?url|private_?key_?id)$/;
const SECRETISH_ANYWHERE = /secret|password|passwd|passphrase|credential/;
const NON_SECRET_NAMES =
  /(?:^|_)(?:public|primary|sort|partition|cache|foreign|hash|range|unique|idempotency|object|s3|row|map|lookup|dict|query|storage|sort|group|dedup|dedupe|routing|shard|index|api_key_id|key_id|key_name|key_path|key_file|keyfile|token_type|token_count|tokens|max_tokens|token_limit|token_url|token_endpoint|password_hash|password_length|password_policy|secret_name|secret_arn|secret_id|header|field|param|env|var|prefix|label|kind|ttl|type|url|uri|endpoint)$/;

function snakeName(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[.-]+/g, '_')
    .toLowerCase();
}

/** Whether an assignment's name says the value is a credential. */
export function isSecretName(name: string): boolean {
  const snake = snakeName(name);
  if (STRONG_NAME.test(snake)) return true;
  if (NON_SECRET_NAMES.test(snake)) return false;
  if (SECRETISH_ANYWHERE.test(snake)) return true;
  return /(?:^|_)key$/.test(snake) && snake !== 'key';
}

const SECRET_NAME_HINTS = ['key', 'token', 'secret', 'pass', 'pwd', 'auth', 'cred', 'dsn', 'conn', 'webhook', 'bearer'];

/** Names whose values may be passphrases (several words). */
function isPasswordName(name: string): boolean {
  return /pass|pwd/i.test(name);
}

function minLengthFor(name: string): number {
  return /pass|pwd/i.test(name) ? 4 : 8;
}

const NAME = `[A-Za-z_][A-Za-z0-9_.-]{0,63}`;
// `name = "value"`, `"name": "value"`, `name: 'value'`, `--name=value` (JSON-escaped quotes allowed).
const QUOTED_ASSIGNMENT = new RegExp(
  `(?<![A-Za-z0-9_.-])(?<n>${NAME})(?<c>\\\\?["']?)\\s*(?::=|=>|=|:)\\s*(?:[A-Za-z]?\\\\?(?<q>["'\`]))(?<v>[^"'\`\\r\\n\\\\]{1,1024})\\\\?\\k<q>`,
  'gd',
);
// Shell/env style: `export NAME=value`, `NAME=value cmd`, `--password value`.
const ENV_ASSIGNMENT = /(?<![A-Za-z0-9_.$-])(?<n>[A-Z][A-Z0-9_]{1,63})=(?<v>[^\s"'`;&|)(<>\\]{1,1024})(?![^\s"'`;&|)<>\\])/dg;
const FLAG_ASSIGNMENT =
  /(?<![A-Za-z0-9_-])--?(?<n>(?:[a-z]+-)*(?:password|passwd|token|api-key|apikey|secret|client-secret|access-key|secret-key|auth-token))(?:=|\s+)(?<v>[^\s"'`;&|)(<>\\-][^\s"'`;&|)(<>\\]*)/dgi;
// YAML / INI / TOML without quotes, one per line: `api_key: abc123…`.
// Lines may also be JSON-escaped inside a string that was itself decoded once (`…\\npassword: x\\n…`).
const LINE_ASSIGNMENT = new RegExp(
  `(?:^|(?<=\\\\n|"))(?<i>[ \\t]*(?:-[ \\t]+)?)(?<n>${NAME})[ \\t]*[:=][ \\t]*(?<v>[^\\s"'#,;{}()\\[\\]\\\\]+(?:#[^\\s"',;{}()\\[\\]\\\\]*)*)[ \\t]*(?=$|\\\\[rn]|\\\\?")`,
  'gdm',
);

const URL_CREDENTIALS = /(?<s>[A-Za-z][A-Za-z0-9+.-]{1,20}:\/\/)(?<u>[^\s:/?#@"'<>\\]{0,256}):(?<v>[^\s/@"'<>\\]{1,256})@(?=[A-Za-z0-9[<])/dg;
const AUTH_HEADER =
  /(?<![A-Za-z0-9-])(?:Proxy-)?Authorization\\?["']?(?:\s*[:=]\s*\\?["']?(?:(?:Bearer|Basic|Token|Bot|Digest|ApiKey|Key|Bearer:)\s+)?|\s+\\?["']?(?:Bearer|Basic|Token|Digest)\s+)(?<v>[A-Za-z0-9._~+/=:-]{8,})/dgi;
const BEARER = /(?<![A-Za-z0-9-])Bearer\s+(?<v>[A-Za-z0-9._~+/=-]{16,})/dg;
const KEY_HEADER =
  /(?<![A-Za-z0-9-])(?:x-api-key|api-key|x-goog-api-key|x-auth-token|private-token|x-access-token|ocp-apim-subscription-key)\\?["']?\s*:\s*\\?["']?(?<v>[A-Za-z0-9._~+/=-]{12,})/dgi;
// Only inside `;`-separated connection strings (`Server=…;Password=…;`), not `password=x` in code.
const CONNECTION_PASSWORD = /(?<=;\s?)(?:Password|Pwd)=(?<v>[^;"'\s\\]{3,256})|(?<![A-Za-z0-9_])(?:Password|Pwd)=(?<w>[^;"'\s\\]{3,256})(?=;)/dgi;

const SECRET_PLACEHOLDER = (kind: string) => `<SECRET:${kind}>`;

/** `<SECRET:kind>` over `text[start, end)`, counted under `secret:kind`. */
export function secretSpan(start: number, end: number, kind: string): ReplacedSpan {
  return { start, end, text: SECRET_PLACEHOLDER(kind), cls: `secret:${kind}` };
}

/** The match with its named group (needs the `d` flag) replaced by `<SECRET:kind>`. */
function secretGroup(match: RegExpExecArray, kind: string, counts: ClassCounts, group = 'v'): Piece[] {
  const [start, end] = match.indices!.groups![group]!;
  return spliceSpans(match.input, match.index, match.index + match[0].length, [secretSpan(start, end, kind)], counts);
}

/** Known shapes, credentials in URLs and headers, and secret-named assignments. */
export function redactSecrets(input: Piece[], counts: ClassCounts, lower: string): Piece[] {
  let pieces = redactJoinedLiterals(input, counts, lower);
  for (const shape of SHAPE_RULES) {
    if (!hinted(lower, shape.hints)) continue;
    pieces = applyPass(pieces, shape.pattern, (match) => {
      const hasValueGroup = match.groups?.v !== undefined;
      const value = hasValueGroup ? match.groups!.v! : match[0];
      if (shape.accept !== undefined && !shape.accept(value)) return null;
      if (hasValueGroup) return secretGroup(match, shape.kind, counts);
      return [placeholder(SECRET_PLACEHOLDER(shape.kind), `secret:${shape.kind}`, counts)];
    });
  }
  if (lower.includes('://'))
    pieces = applyPass(pieces, URL_CREDENTIALS, (match) => {
      const user = match.groups!.u!;
      const password = match.groups!.v!;
      if (!realValue(password, 1)) return null;
      // `?`/`#` belong in a password only unencoded by mistake; `host:3000?next=a@b` is a port and a query.
      const hostLike = user === 'localhost' || user.includes('.') || /^\d+$/.test(user);
      if (/[?#]/.test(password) && (user.length === 0 || (hostLike && /^\d*[?#]/.test(password)))) return null;
      const out: Piece[] = [fixed(match.groups!.s!)];
      if (user.length > 0) out.push(placeholder('<USER>', 'user', counts));
      out.push(fixed(':'), placeholder(SECRET_PLACEHOLDER('password'), 'secret:password', counts), fixed('@'));
      return out;
    });
  const valueRule = (hints: string[], pattern: RegExp, kind: string, min: number) =>
    hinted(lower, hints) ? applyPass(pieces, pattern, (match) => (realValue(match.groups!.v!, min) ? secretGroup(match, kind, counts) : null)) : pieces;
  pieces = valueRule(['authorization'], AUTH_HEADER, 'authorization', 8);
  pieces = valueRule(['bearer'], BEARER, 'bearer_token', 16);
  pieces = valueRule(['api-key', 'auth-token', 'private-token', 'access-token', 'apim'], KEY_HEADER, 'api_key_header', 12);
  if (hinted(lower, ['password=', 'pwd='])) {
    pieces = applyPass(pieces, CONNECTION_PASSWORD, (match) => {
      const group = match.groups!.v === undefined ? 'w' : 'v';
      return realValue(match.groups![group]!, 3) ? secretGroup(match, 'password', counts, group) : null;
    });
  }
  if (!hinted(lower, SECRET_NAME_HINTS)) return pieces;
  pieces = applyPass(pieces, QUOTED_ASSIGNMENT, (match) => {
    const name = match.groups!.n!;
    const value = match.groups!.v!;
    // A quoted key opens its quote right before the name; `'✅ pass' : '❌ fail'` ends a string
    // whose last word happens to be a secret-ish name (a ternary, not an assignment).
    if (match.groups!.c! !== '' && !/["']/.test(match.input[match.index - 1] ?? '')) return null;
    if (!isSecretName(name) || !realValue(value, minLengthFor(name), isPasswordName(name))) return null;
    if (/(?:^|_)key$/i.test(snakeName(name)) && !STRONG_NAME.test(snakeName(name)) && !looksGenerated(value)) return null;
    if (namesItself(name, value)) return null;
    return secretGroup(match, assignmentKind(name), counts);
  });
  pieces = applyPass(pieces, ENV_ASSIGNMENT, (match) => {
    const name = match.groups!.n!;
    const value = match.groups!.v!;
    if (!isSecretName(name) || !realValue(value, minLengthFor(name))) return null;
    return secretGroup(match, assignmentKind(name), counts);
  });
  pieces = applyPass(pieces, FLAG_ASSIGNMENT, (match) => {
    const value = match.groups!.v!;
    if (!realValue(value, minLengthFor(match.groups!.n!), false, true)) return null;
    return secretGroup(match, assignmentKind(match.groups!.n!), counts);
  });
  pieces = applyPass(pieces, LINE_ASSIGNMENT, (match) => {
    const name = match.groups!.n!;
    const value = match.groups!.v!;
    if (!isSecretName(name) || !realValue(value, minLengthFor(name))) return null;
    // Unquoted words in code (`password: str`) are types or identifiers, not secrets.
    if (!/pass|pwd/i.test(name) && !looksGenerated(value) && !/[^A-Za-z0-9_]/.test(value)) return null;
    return secretGroup(match, assignmentKind(name), counts);
  });
  return pieces;
}

/**
 * Values that name rather than hold a secret: an enum member (`ClientSecretPost = "ClientSecretPost"`)
 * or, for names other than passwords, lower-case words joined by `-`/`_`/`.` (`'compute-placeholder'`,
 * `'x-api-token'`).
 */
function namesItself(name: string, value: string): boolean {
  if (value.toLowerCase() === name.toLowerCase()) return true;
  return !isPasswordName(name) && /^[a-z]+(?:[-_.][a-z]+)+$/.test(value);
}

/**
 * For a JSON member `"name": "value"`: the secret kind when the name says credential
 * and the value looks like one, else null.
 */
export function secretKindForMember(name: string, value: string): string | null {
  if (!isSecretName(name) || !realValue(value, minLengthFor(name), isPasswordName(name)) || namesItself(name, value)) return null;
  const snake = snakeName(name);
  if (/(?:^|_)key$/.test(snake) && !STRONG_NAME.test(snake) && !looksGenerated(value)) return null;
  return assignmentKind(name);
}

function assignmentKind(name: string): string {
  const snake = snakeName(name);
  if (/pass|pwd/.test(snake)) return 'password';
  if (/dsn|connection|conn_str/.test(snake)) return 'connection_string';
  if (/webhook/.test(snake)) return 'webhook_url';
  if (/token|bearer/.test(snake)) return 'token';
  return 'secret_assignment';
}

// PEM private key blocks, raw or with JSON-escaped `\n`; a block cut before its END
// line is still removed up to the end of its base64 body.
const PEM_PRIVATE =
  /-----BEGIN (?<t>(?:[A-Z0-9]+ )*)PRIVATE KEY(?<b> BLOCK)?-----(?:[\s\S]{0,40000}?-----END \k<t>PRIVATE KEY\k<b>-----|[A-Za-z0-9+/=\s\\:,.-]*)/g;
const PEM_PUBLIC =
  /(?:-----BEGIN (?:RSA |EC |DSA |OPENSSH |SSH2 )?PUBLIC KEY-----[\s\S]{0,20000}?-----END (?:RSA |EC |DSA |OPENSSH |SSH2 )?PUBLIC KEY-----|---- BEGIN SSH2 PUBLIC KEY ----[\s\S]{0,20000}?---- END SSH2 PUBLIC KEY ----)/g;
const SSH_PUBLIC =
  /(?<![A-Za-z0-9_-])(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp(?:256|384|521)|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)(?:\s|\\t)+AAAA[A-Za-z0-9+/]{20,}={0,3}/g;
const SSH_PRIVATE_TYPES = new Set(['OPENSSH ', 'RSA ', 'DSA ', 'EC ']);

/** SSH keys (public and private) → `<SSH_KEY>`; other private keys → `<SECRET:private_key>`. */
export function redactKeys(input: Piece[], counts: ClassCounts, lower: string): Piece[] {
  if (!hinted(lower, ['private key', 'public key', 'ssh-', 'ecdsa-', 'ssh2'])) return input;
  let pieces = applyPass(input, PEM_PRIVATE, (match) => {
    const type = match.groups?.t ?? '';
    if (SSH_PRIVATE_TYPES.has(type)) return [placeholder('<SSH_KEY>', 'ssh_key', counts)];
    return [placeholder(SECRET_PLACEHOLDER('private_key'), 'secret:private_key', counts)];
  });
  pieces = applyPass(pieces, PEM_PUBLIC, () => [placeholder('<SSH_KEY>', 'ssh_key', counts)]);
  pieces = applyPass(pieces, SSH_PUBLIC, () => [placeholder('<SSH_KEY>', 'ssh_key', counts)]);
  return pieces;
}

const DATA_URI = /(?<h>data:[A-Za-z0-9.+-]+\/[A-Za-z0-9.+-]+(?:;[A-Za-z0-9.=+-]+)*;base64,)(?<v>[A-Za-z0-9+/=\s\\]{16,})/dg;

/**
 * Base64 payloads (images, documents, opaque provider blobs) are not secrets, but a
 * screenshot can show anything, so their content never survives: `<BASE64_DATA>`.
 */
export function redactDataUris(input: Piece[], counts: ClassCounts, lower: string): Piece[] {
  if (!lower.includes('base64,')) return input;
  return applyPass(input, DATA_URI, (match) => [keep(match.groups!.h!), placeholder('<BASE64_DATA>', 'base64_data', counts)]);
}

/**
 * The kind of the first known token shape found anywhere in `text` (used on text a
 * secret was hidden in: decoded hex, joined string literals), or null.
 */
export function knownShapeIn(text: string): string | null {
  const lower = text.toLowerCase();
  for (const shape of SHAPE_RULES) {
    if (!hinted(lower, shape.hints)) continue;
    const [match] = text.matchAll(shape.pattern);
    if (match !== undefined && (shape.accept === undefined || shape.accept(match.groups?.v ?? match[0]))) return shape.kind;
  }
  return null;
}

// Two or more string literals glued into one value at run time: `"sk-" + "proj-…"`, adjacent
// literals (Python), array pieces joined (`['sk-ant-', 'api03-…'].join('')`, `''.join([…])`),
// template pieces (`${"sk-"}${"…"}`), `'sk-'.concat('…', '…')`; across lines, quotes raw or
// JSON-escaped, line breaks raw or JSON-escaped.
const PIECE = '[A-Za-z0-9_+/=.:-]{1,256}';
const GLUE = String.raw`(?:\s|\\[nrt]|\+|,|\$\{|\}|\[|\.concat\()*`;
const JOINED_LITERALS = new RegExp(String.raw`(?<q>\\*["'\`])${PIECE}\k<q>(?:${GLUE}(\\*["'\`])${PIECE}\2){1,16}`, 'g');
const LITERAL_BODY = new RegExp(String.raw`\\*(["'\`])(${PIECE})\\*\1`, 'g');

/**
 * A key split into string pieces (to dodge scanners, or wrapped by a formatter) is joined back
 * and checked whole; when it holds a known shape, or (pieces glued by `+`, adjacency, template
 * or `concat`, not a list) a generated-looking token of 20+ characters, the whole expression is
 * replaced. The pieces after the first must themselves look generated: a list of prefixes
 * (`['xoxb-', 'xoxp-', …]`) spells a shape but is not a key.
 */
export function redactJoinedLiterals(input: Piece[], counts: ClassCounts, lower: string): Piece[] {
  if (!/["'`][^"'`]{0,256}["'`]/.test(lower)) return input;
  return applyPass(input, JOINED_LITERALS, (match) => {
    // Pieces glued by line breaks alone (Python) start an expression: after `(`, `=`, `[`, `,`, `:`.
    // A quoted word in a comment (`// "Hello"`) above a literal is not one of them.
    // (A short window: the text before the match can be megabytes long.)
    const before = match.input.slice(Math.max(0, match.index - 64), match.index).replace(/(?:\s|\\[nrt])+$/, '');
    const operator = /^[^"'`]*[^\s"'`\\]/.test(match[0].replace(LITERAL_BODY, ''));
    if (!operator && before.length > 0 && !/[(=[,:]$/.test(before)) return null;
    const bodies = [...match[0].matchAll(LITERAL_BODY)].map((m) => m[2]!);
    const joined = bodies.join('');
    if (bodies.length < 2 || joined.length < 20 || !looksGenerated(bodies.slice(1).join(''))) return null;
    const glued = match[0].replace(LITERAL_BODY, '');
    const listed = glued.includes(',') && !glued.includes('.concat(');
    const kind = knownShapeIn(joined) ?? (!listed && looksGenerated(joined) && !/^[0-9a-f]+$/i.test(joined) ? 'split_key' : null);
    if (kind === null) return null;
    const quote = match.groups!.q!;
    return [fixed(quote), placeholder(SECRET_PLACEHOLDER(kind), `secret:${kind}`, counts), fixed(quote)];
  });
}

/** Decodes an even-length hex string to text when every byte is printable ASCII. */
export function printableFromHex(hex: string): string | null {
  const body = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  if (body.length % 2 !== 0 || body.length < 32) return null;
  let out = '';
  for (let i = 0; i < body.length; i += 2) {
    const byte = Number.parseInt(body.slice(i, i + 2), 16);
    if (!(byte >= 0x20 && byte < 0x7f)) return null;
    out += String.fromCharCode(byte);
  }
  return out;
}
