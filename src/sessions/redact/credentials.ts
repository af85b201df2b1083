import { type ClassCounts, type Piece, applyPass, spliceSpans } from './pieces.js';
import { isMemberAccess, secretSpan } from './secrets.js';

/**
 * Credentials written in the forms of particular tools rather than as `name=value`:
 * `curl -u user:pass`, `mysql -pPASS`, `docker login -p`, `sshpass -p`, `redis-cli -a`,
 * `htpasswd -b`, `.pgpass` and `.netrc` lines, basic-auth tuples in Python and friends,
 * credentials in URL query strings and Kubernetes `name:`/`value:` env pairs. Each rule
 * names the one span it replaces; everything around it stays.
 */

interface Span {
  start: number;
  end: number;
  kind: string;
}

/** Like `applyPass`, but the callback names spans inside the match to replace (offsets in the match). */
function spanPass(pieces: Piece[], pattern: RegExp, spansOf: (match: RegExpExecArray) => Span[], counts: ClassCounts): Piece[] {
  return applyPass(pieces, pattern, (match) => {
    const spans = spansOf(match).map((span) => secretSpan(span.start, span.end, span.kind));
    return spans.length === 0 ? null : spliceSpans(match[0], 0, match[0].length, spans, counts);
  });
}

const STAND_IN =
  /^(?:\$|%|<|\{\{|\*{3,}|x{4,}$|\.{3}|…|your[_-]|example|changeme$|password$|passwd$|secret$|token$|x{3,}(?:[-_.]?x+)*$|null$|none$|undefined$|true$|false$)/i;

/** A credential literal, not a variable, a placeholder or a user:group pair. */
function credentialValue(value: string, min = 4): boolean {
  if (value.length < min || value.length > 512) return false;
  if (STAND_IN.test(value)) return false;
  if (/^\d+$/.test(value)) return false; // uid:gid, ports
  if (/^(.)\1+$/.test(value)) return false;
  return true;
}

/** A password in a position where a bare word could also be a name (`-u app:app`): needs a digit, a capital or a symbol. */
function passwordLike(value: string, min = 4): boolean {
  return credentialValue(value, min) && !/^[a-z_-]+$/.test(value);
}

/** The text from a command word to the end of its command (newline, `;`, `|`, `&&`), JSON-escaped newlines included. */
const SEGMENT_END = String.raw`(?:[^\n;|&\\]|\\(?![nr])|&(?!&)){0,2000}`;

interface Word {
  /** The token without its quotes (for comparing flags). */
  text: string;
  /** The raw token's offsets in the segment. */
  start: number;
  end: number;
  raw: string;
}

/** Whitespace-separated tokens of a command segment (quoted chunks, JSON-escaped or not, stay in one token). */
function tokens(segment: string): Word[] {
  const out: Word[] = [];
  for (const match of segment.matchAll(/(?:\\?(["'])(?:(?!\\?\1).)*\\?\1|[^\s"'])+/g)) {
    out.push({ text: match[0].replace(/\\?["']/g, ''), start: match.index, end: match.index + match[0].length, raw: match[0] });
  }
  return out;
}

/** The span of a word's value from `offset` on, its surrounding quotes left out. */
function valueSpan(word: Word, offset: number): { start: number; end: number; value: string } {
  let body = word.raw.slice(offset);
  let start = word.start + offset;
  const open = /^\\?["']/.exec(body);
  if (open !== null) {
    body = body.slice(open[0].length);
    start += open[0].length;
  }
  const close = /\\?["']$/.exec(body);
  if (close !== null) body = body.slice(0, body.length - close[0].length);
  return { start, end: start + body.length, value: body };
}

// ── curl / wget / httpie: `-u user:pass`, `--user user:pass`, `-a user:pass` ───────────────────
const USER_PASS_FLAG =
  /(?<![\w-])(?:-u|--user|-a|--auth|--proxy-user|-U)(?:(?:\\?["'])?(?:[ \t]*,[ \t]*|[ \t=]+)(?:\\?["'])?|(?=[^\s"'-]))(?<u>[^\s:"'\\]{1,64}):(?<v>[^\s"'\\]{1,256})/dg;

const HTTP_CLIENT = /(?:^|[\s"'/(])(?:curl|wget|http|https|xh|aria2c|lftp)(?=[\s"',])/;

// ── a password piped into a tool that reads it from stdin: `echo "pw" | docker login --password-stdin` ─────
const PIPED_PASSWORD =
  /(?<![\w-])(?:echo|printf)(?:\s+-[neE]+)*\s+(?<q>\\?["']?)(?<v>[^\s"'|\\]{4,256})\k<q>\s*\|\s*(?:sudo\s+)?(?:(?:docker|podman|nerdctl|buildah|skopeo|oras)\s+login|helm\s+registry\s+login|sudo\s+-S|passwd\s+--stdin|chpasswd|sshpass|aws\s+configure)/dg;

// ── a user:password pair encoded in code: `btoa('u:p')`, `b64encode(b"u:p")`, `Buffer.from('u:p')` ──────
const ENCODED_PAIR =
  /(?:btoa|b64encode|base64encode|encodebytes|Buffer\.from|encodeToString|getEncoder\(\)\.encode)\s*\(\s*(?:b|bytes\()?\\*(?<q>["'`])(?<u>[^"'`\s:\\]{1,64}):(?<v>[^"'`\s\\]{1,256})\\*\k<q>/dg;

// ── tools whose password flag takes the next word or a glued value ─────────────────────────────
const MYSQL = '(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mysqlcheck|mariadb|mariadb-dump|mariadb-admin)';
const COMMANDS = new RegExp(
  String.raw`(?<![\w.-])(?:${MYSQL}|(?:docker|podman|nerdctl|helm\s+registry|oras)\s+login|sshpass|redis-cli|keydb-cli|mongo|mongosh|mongodump|mongorestore|htpasswd|psql|pgcli|smbclient|ldapsearch|ldapadd|ldapmodify)\b${SEGMENT_END}`,
  'g',
);

/** Password spans in one command segment (see COMMANDS), offsets in the segment. */
function commandPasswordSpans(segment: string): Span[] {
  const words = tokens(segment);
  const command = words[0]?.text ?? '';
  const spans: Span[] = [];
  const take = (word: Word | undefined, offset = 0) => {
    if (word === undefined || (offset === 0 && word.text.startsWith('-'))) return;
    const { start, end, value } = valueSpan(word, offset);
    // A password flag's value is a password whatever it looks like.
    if (credentialValue(value)) spans.push({ start, end, kind: 'password' });
  };
  const mysqlLike = new RegExp(`^${MYSQL}$`).test(command);
  const mongoLike = command.startsWith('mongo');
  words.forEach((word, i) => {
    const text = word.text;
    const next = words[i + 1];
    if (text === '--password' || text === '--pass' || text === '--passwd') take(next);
    else if (/^--pass(?:word|wd)?=/.test(text)) take(word, word.raw.indexOf('=') + 1);
    else if (mysqlLike && text.startsWith('-p') && text.length > 2 && !text.startsWith('--')) take(word, 2);
    else if (text === '-p' && (command === 'sshpass' || /login$/.test(command) || mongoLike || /^(?:docker|podman|nerdctl|helm|oras)$/.test(command)))
      take(next);
    else if (text === '-a' && /-cli$/.test(command)) take(next);
    else if (command === 'ldapsearch' || command === 'ldapadd' || command === 'ldapmodify') {
      if (text === '-w') take(next);
    } else if (command === 'smbclient' && (text === '-U' || text === '--user') && next !== undefined) {
      const percent = next.raw.indexOf('%');
      if (percent > 0) take(next, percent + 1);
    }
  });
  // `docker login` is two words: the tokens above start at `docker`.
  if (command === 'htpasswd' && words.some((w) => /^-[a-zA-Z]*b[a-zA-Z]*$/.test(w.text))) {
    const positional = words.slice(1).filter((w) => !w.text.startsWith('-'));
    const nFile = words.some((w) => /^-[a-zA-Z]*n[a-zA-Z]*$/.test(w.text)) ? 0 : 1;
    take(positional[nFile + 1]);
  }
  return spans;
}

// ── .pgpass: host:port:database:user:password ─────────────────────────────────────────
const PGPASS =
  /(?:(?<=\\[nrt])|(?<![\w.:\\/@-]))(?<h>\*|[A-Za-z0-9][A-Za-z0-9.-]{0,253}|\[[0-9a-fA-F:]+\]):(?<p>\d{2,5}|\*):(?<d>[^\s:"'\\]{1,64}):(?<u>[^\s:"'\\]{1,64}):(?<v>(?:\\:|[^\s"'\\])+?)(?=$|[\s"'\\])/dgm;

// ── .netrc: `machine host login user password pw` (newlines allowed between) ───────────────
const NETRC = /(?<![\w-])(?:login|user)(?:\s|\\[nrt]){1,16}[^\s\\]{1,128}(?:\s|\\[nrt]){1,16}(?:password|passwd)(?:\s|\\[nrt]){1,16}(?<v>[^\s"'\\]{1,256})/dg;

// ── basic-auth pairs in code: `auth=("u", "p")`, `HTTPBasicAuth('u', 'p')`, `BasicAuth(u, 'p')` ─────
const QUOTED = String.raw`\\*(["'])(?:(?!\\*\1).){0,128}\\*\1`;
const WS = String.raw`(?:\s|\\[nrt])*`;
const AUTH_PAIR = new RegExp(
  String.raw`(?<![\w])(?:auth|basic_auth|proxy_auth|BasicAuth|HTTPBasicAuth|HTTPDigestAuth|HTTPProxyAuth|DigestAuth|BasicAuthMiddleware)${WS}(?:=${WS})?[(\[]${WS}(?:${QUOTED}|[A-Za-z_][\w.]*)${WS},${WS}\\*(?<q>["'])(?<v>(?:(?!\\*\k<q>).){1,256})\\*\k<q>${WS},?${WS}[)\]]`,
  'dg',
);

// ── URL query strings and form bodies: `?token=…`, `&access_token=…`, `X-Amz-Signature=…` ───────
const QUERY_NAMES =
  'access_token|refresh_token|id_token|auth_token|token|api_key|apikey|api-key|key|auth|signature|sig|x-amz-signature|x-amz-security-token|x-amz-credential|x-goog-signature|x-goog-credential|password|passwd|pwd|pass|private_token|client_secret|secret|code_verifier|session|sessionid|jwt';
// A password parameter may hold an unencoded `#` (`?password=ab#cd`): it does not end the value there.
const QUERY = new RegExp(String.raw`(?<=[?&]|&amp;|\\u0026)(?<n>${QUERY_NAMES})=(?<v>(?<=(?:password|passwd|pwd|pass)=)[^&\s"'<>\\]+|[^&#\s"'<>\\]+)`, 'dgi');

function queryValue(name: string, value: string): boolean {
  const lower = name.toLowerCase();
  if (/^(?:password|passwd|pwd|pass)$/.test(lower)) return credentialValue(value, 4);
  if (!credentialValue(value, 8)) return false;
  // `key=` and `auth=` are ordinary words in many URLs: only a random-looking value.
  if (lower === 'key' || lower === 'auth' || lower === 'session') return /\d/.test(value) && /[A-Za-z]/.test(value) && value.length >= 16;
  return /\d/.test(value) || value.length >= 20;
}

// ── `password=…` in key=value lists: libpq (`host=db password=…`), `--from-literal=password=…` ─────
const KEY_VALUE_PASSWORD = /(?<=^|[\s=(,;"'])(?:password|passwd|pwd)=(?<v>[^\s'"&;,()\\]+)(?![(\w])/dgim;

// ── Kubernetes / ECS env pairs: `- name: DB_PASSWORD` then `value: "…"` ───────────────────────
const ENV_PAIR = new RegExp(
  String.raw`\\*["']?name\\*["']?${WS}[:=]${WS}\\*["']?(?<n>[A-Za-z_][A-Za-z0-9_.-]{0,63})\\*["']?${WS},?${WS}-?${WS}\\*["']?value\\*["']?${WS}[:=]${WS}\\*(?<q>["']?)(?<v>[^\s"'\\,}]{1,512})`,
  'dg',
);
const SECRET_ENV_NAME = /pass|pwd|secret|token|api_?key|apikey|credential|private_?key|auth/i;

/** The span of the match's `v` group (offsets in the match), replaced as `kind`. */
function group(match: RegExpExecArray, kind: string): Span[] {
  const [start, end] = match.indices!.groups!.v!;
  return [{ start: start - match.index, end: end - match.index, kind }];
}

/** The `v` group as `kind` when `accept` takes its value. */
function valueAs(kind: string, accept: (value: string, match: RegExpExecArray) => boolean): (match: RegExpExecArray) => Span[] {
  return (match) => (accept(match.groups!.v!, match) ? group(match, kind) : []);
}

/** Each form: a cheap test of the lower-cased text, its pattern, and the spans it replaces. */
const FORMS: Array<[(lower: string) => boolean, RegExp, (match: RegExpExecArray) => Span[]]> = [
  [
    (lower) => /(?<![\w-])(?:-u|--user|-a|--auth|--proxy-user)/.test(lower),
    USER_PASS_FLAG,
    valueAs('password', (value, match) => {
      const user = match.groups!.u!;
      if (value === user || value.startsWith('//')) return false;
      // In an HTTP client's command any word is a password; elsewhere (`docker -u app:staff`) it may be a group.
      const lineStart = Math.max(match.input.lastIndexOf('\n', match.index), match.input.lastIndexOf('\\n', match.index));
      return HTTP_CLIENT.test(match.input.slice(lineStart + 1, match.index)) ? credentialValue(value) : passwordLike(value);
    }),
  ],
  [() => true, COMMANDS, (match) => commandPasswordSpans(match[0])],
  [
    (lower) => lower.includes(':'),
    PGPASS,
    valueAs('password', (value, match) => {
      if (!credentialValue(value) || /^\d+$/.test(match.groups!.d!) || /^\d+$/.test(match.groups!.u!)) return false;
      // An IPv6 address is colon-separated hex groups, not a .pgpass line.
      return !/^[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,4}(?::|$)/.test(match[0].slice(match.groups!.h!.length + 1));
    }),
  ],
  [(lower) => lower.includes('pass'), NETRC, valueAs('password', (value) => credentialValue(value))],
  [(lower) => lower.includes('auth'), AUTH_PAIR, valueAs('password', (value) => credentialValue(value, 3))],
  [(lower) => lower.includes('='), QUERY, valueAs('url_credential', (value, match) => queryValue(match.groups!.n!, value))],
  [(lower) => lower.includes('echo') || lower.includes('printf'), PIPED_PASSWORD, valueAs('password', (value) => credentialValue(value))],
  [
    (lower) => /btoa|b64encode|base64encode|encodebytes|buffer\.from|encode/.test(lower),
    ENCODED_PAIR,
    valueAs('password', (value) => credentialValue(value, 3)),
  ],
  [
    (lower) => lower.includes('pass') || lower.includes('pwd='),
    KEY_VALUE_PASSWORD,
    valueAs('password', (value, match) => {
      // `password=self.password` is code; `--from-literal=password=ab.Cd7` is a value.
      const member = isMemberAccess(value) && !/\d/.test(value);
      // After another `=` it is a flag's value (`--from-literal=password=…`): any word.
      const flag = match.input[match.index - 1] === '=';
      return (flag ? credentialValue(value) : passwordLike(value)) && !member;
    }),
  ],
  [
    (lower) => lower.includes('value'),
    ENV_PAIR,
    valueAs('secret_assignment', (value, match) => SECRET_ENV_NAME.test(match.groups!.n!) && credentialValue(value)),
  ],
];

/** The credential forms above, in the redactor's piece model. */
export function redactCredentialForms(input: Piece[], counts: ClassCounts, lower: string): Piece[] {
  return FORMS.reduce((pieces, [hinted, pattern, spansOf]) => (hinted(lower) ? spanPass(pieces, pattern, spansOf, counts) : pieces), input);
}
