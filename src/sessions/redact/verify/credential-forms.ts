import { eachIndexOf, type Hit, findPrefixedTokens, isLiteralChar, isStandIn, looksLikeMemberAccess } from './detectors.js';
import { isGeneratedToken } from './entropy-check.js';

/**
 * The verifier's own look at credentials written the way tools take them (the redactor's
 * `credentials.ts` covers the same ground with regular expressions; this file walks words and
 * characters instead, so one mistake does not hide a leak from both): password flags of
 * curl/mysql/docker/sshpass/redis-cli/htpasswd and friends, `.pgpass` and `.netrc` lines,
 * basic-auth pairs in code, URL query credentials, name/value env pairs, keys split into
 * string pieces. Text arrives with one level of JSON escaping undone.
 */

interface Word {
  text: string;
  start: number;
  end: number;
}

/**
 * A stand-in (`$VAR`, `<placeholder>`, `changeme`) in a place that holds a literal: quoted, in a
 * URL, on a command line. Member access (`a.b`) is code elsewhere, but here it is text.
 */
function literalStandIn(value: string): boolean {
  return isStandIn(value) && !looksLikeMemberAccess(value);
}

const isSpace = (ch: string | undefined) => ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r';
const isQuote = (ch: string | undefined) => ch === '"' || ch === "'" || ch === '`';

/** Words of a command: runs of non-space characters. */
function words(text: string, from: number, to: number): Word[] {
  const out: Word[] = [];
  let i = from;
  while (i < to) {
    while (i < to && isSpace(text[i])) i++;
    if (i >= to) break;
    const start = i;
    while (i < to && !isSpace(text[i])) i++;
    out.push({ text: text.slice(start, i), start, end: i });
  }
  return out;
}

/** The value inside a word from `offset` on, quotes and escaping backslashes at its ends left out. */
function inner(word: Word, offset = 0): Word {
  let start = word.start + offset;
  let end = word.end;
  let text = word.text.slice(offset);
  while (text.length > 0 && (text[0] === '\\' || isQuote(text[0]))) {
    text = text.slice(1);
    start++;
  }
  while (text.length > 0 && (text.endsWith('\\') || isQuote(text[text.length - 1]))) {
    text = text.slice(0, -1);
    end--;
  }
  return { text, start, end };
}

/** A password-looking value: not a flag, a variable, a number or a lower-case word (a name, a group). */
function passwordish(value: string): boolean {
  // On a command line `a.b` is a literal, not member access: only the other stand-ins count.
  if (value.length < 4 || value.length > 512 || value.startsWith('-') || literalStandIn(value)) return false;
  if (/^[\d:.]+$/.test(value) || /^[a-z_-]+$/.test(value)) return false;
  return !value.startsWith('//');
}

/** Where the command that starts at `from` ends: a line break (raw or escaped), `;`, `|`, `&&`. */
function commandEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '\n' || ch === ';' || ch === '|') break;
    if (ch === '&' && text[i + 1] === '&') break;
    if (ch === '\\' && (text[i + 1] === 'n' || text[i + 1] === 'r')) break;
    i++;
  }
  return i;
}

const MYSQL_TOOLS = new Set(['mysql', 'mysqldump', 'mysqladmin', 'mysqlimport', 'mysqlsh', 'mysqlcheck', 'mariadb', 'mariadb-dump', 'mariadb-admin']);
const P_FLAG_TOOLS = new Set(['sshpass', 'docker', 'podman', 'nerdctl', 'mongo', 'mongosh', 'mongodump', 'mongorestore', 'oras', 'helm']);
const A_FLAG_TOOLS = new Set(['redis-cli', 'keydb-cli']);

/** Password flags in every command of the text. */
export function findCommandPasswords(text: string): Hit[] {
  const hits: Hit[] = [];
  const add = (word: Word | undefined, offset = 0, anyWord = false) => {
    // The redactor's placeholders (`<SECRET:password>`) hold a colon that is not user:password.
    if (word === undefined || /<[A-Z_]+(?::[a-z0-9_]+)?>/.test(word.text)) return;
    const value = inner(word, offset);
    const plainWord = anyWord && value.text.length >= 4 && !literalStandIn(value.text) && !/^[\d:.]+$/.test(value.text) && !value.text.startsWith('//');
    if (plainWord || passwordish(value.text)) hits.push({ kind: 'password', start: value.start, end: value.end });
  };
  let lineStart = 0;
  while (lineStart < text.length) {
    const end = commandEnd(text, lineStart);
    const list = words(text, lineStart, end);
    // In an HTTP client's command `-u user:pw` is always a password (elsewhere it may be user:group).
    const client = list.some((w) => /(?:^|["'(/:])(?:curl|wget|http|https|xh|aria2c|lftp)$/.test(w.text));
    list.forEach((word, i) => {
      const bare = word.text.replace(/^[\\"'`([]+/, '').replace(/[\\"'`,)\]]+$/, '');
      // The command word may sit at the end of JSON or a path (`…"content":"mysql`, `/usr/bin/mysql`).
      const tool = bare.split(/["'/:=([{]/).pop() ?? '';
      // The words after this one, up to the end of its command (at most 64: a command's flags are near it).
      // Built lazily: most words are no flag or tool, and a long line has many words.
      let restCache: Word[] | undefined;
      const restOf = () => {
        restCache ??= list.slice(i + 1, i + 65);
        return restCache;
      };
      /** The word after the first of `flags` in the rest of the command. */
      const after = (...flags: string[]) => {
        const rest = restOf();
        const at = rest.findIndex((w) => flags.includes(w.text));
        return at >= 0 ? rest[at + 1] : undefined;
      };
      // user:password after -u/--user/-a (curl, wget, httpie) in any command, glued or not.
      if (/^(?:-u|--user|-a|--auth|--proxy-user)$/.test(bare)) {
        const next = list[i + 1];
        if (next !== undefined) {
          const value = inner(next);
          const colon = value.text.indexOf(':');
          if (colon > 0 && value.text.slice(colon + 1) !== value.text.slice(0, colon)) add(value, colon + 1, client);
        }
      } else if (/^(?:-u|--user=)[^:]+:/.test(bare) && !bare.includes('://')) {
        const value = inner(word);
        const colon = value.text.indexOf(':');
        add(value, colon + 1, client);
      }
      // `--password x`, `--password=x`, `--http-password=x`, `--db-pass x`.
      if (/^--(?:[a-z]+-)*pass(?:word|wd)?$/.test(bare)) add(list[i + 1], 0, true);
      else if (/^--(?:[a-z]+-)*pass(?:word|wd)?=/.test(bare)) add(word, word.text.indexOf('=') + 1, true);
      if (tool === 'ldapsearch' || tool === 'ldapadd' || tool === 'ldapmodify' || tool === 'ldapdelete') add(after('-w'), 0, true);
      if (tool === 'smbclient' || tool === 'rpcclient' || tool === 'smbmap') {
        const pair = after('-U', '--user');
        if (pair !== undefined && pair.text.indexOf('%') > 0) add(pair, pair.text.indexOf('%') + 1, true);
      }
      if (MYSQL_TOOLS.has(tool)) {
        for (const arg of restOf()) {
          const a = arg.text.replace(/^\\?["']/, '');
          if (a.startsWith('-p') && a.length > 2 && !a.startsWith('--')) add(arg, arg.text.indexOf('-p') + 2, true);
        }
      }
      // `docker login -p`, not `docker run -p 5432:5432`.
      const login = list[i + 1]?.text === 'login' || (tool !== 'docker' && tool !== 'podman' && tool !== 'nerdctl' && tool !== 'helm' && tool !== 'oras');
      if (P_FLAG_TOOLS.has(tool) && login) add(after('-p'), 0, true);
      if (A_FLAG_TOOLS.has(tool)) add(after('-a'), 0, true);
      if (tool === 'htpasswd' && restOf().some((w) => /^-\w*b/.test(w.text))) {
        const rest = restOf();
        const positional = rest.filter((w) => !w.text.startsWith('-'));
        const noFile = rest.some((w) => /^-\w*n/.test(w.text));
        add(positional[noFile ? 1 : 2], 0, true);
      }
    });
    lineStart = end + 1;
  }
  return hits;
}

/** `.pgpass` lines: `host:port:database:user:password`. */
export function findPgpassLines(text: string): Hit[] {
  const hits: Hit[] = [];
  for (const word of words(text, 0, text.length)) {
    // A line may sit inside quotes, JSON or after an escaped line break: test each stretch between them.
    const stretches = word.text.split(/(\\[nrt]|\\?["'`]|[,;()[\]{}])/);
    let offset = word.start;
    for (const token of stretches) {
      const start = offset;
      offset += token.length;
      const fields = token.split(':');
      if (fields.length < 5 || fields.slice(0, 4).some((f) => f.length === 0)) continue;
      const [host, port, database, user] = fields as [string, string, string, string];
      if (!/^(?:\d{2,5}|\*)$/.test(port) || host.includes('/') || /^\d+$/.test(database) || /^\d+$/.test(user)) continue;
      if (fields.slice(1, 5).every((f) => /^[0-9a-fA-F]{1,4}$/.test(f))) continue; // IPv6 (`[IPv6:2001:db8:…]`)
      const passwordStart = host.length + port.length + database.length + user.length + 4;
      const password = token.slice(passwordStart);
      if (password.length >= 4 && !literalStandIn(password) && !/^\d+$/.test(password)) {
        hits.push({ kind: 'password', start: start + passwordStart, end: start + token.length });
      }
    }
  }
  return hits;
}

/** `.netrc`: `login <user> password <pw>` (any whitespace, lines included). */
export function findNetrcPasswords(text: string): Hit[] {
  const hits: Hit[] = [];
  const list = words(text.replace(/\\[nrt]/g, '  '), 0, text.length);
  list.forEach((word, i) => {
    if ((word.text === 'password' || word.text === 'passwd') && (list[i - 2]?.text === 'login' || list[i - 2]?.text === 'user')) {
      const value = list[i + 1];
      if (value !== undefined && !literalStandIn(value.text) && value.text.length >= 4) hits.push({ kind: 'password', start: value.start, end: value.end });
    }
  });
  return hits;
}

const AUTH_CALLS = ['auth', 'basicauth', 'httpbasicauth', 'httpdigestauth', 'httpproxyauth', 'digestauth', 'basic_auth', 'proxy_auth'];

/** Skips spaces, raw and escaped line breaks. */
function skipBlank(text: string, at: number): number {
  let i = at;
  for (;;) {
    if (isSpace(text[i])) i++;
    else if (text[i] === '\\' && (text[i + 1] === 'n' || text[i + 1] === 'r' || text[i + 1] === 't')) i += 2;
    else return i;
  }
}

/** A quoted literal at `at` (quotes possibly backslash-escaped): its body, and where it ends. */
function quotedAt(text: string, at: number, maxBody = 256): { start: number; end: number; after: number } | null {
  let i = at;
  if (text[i] === '\\') i++;
  const quote = text[i];
  if (!isQuote(quote)) return null;
  const start = i + 1;
  let j = start;
  while (j < text.length && j - start <= maxBody && text[j] !== quote && text[j] !== '\n') j++;
  if (text[j] !== quote || j === start) return null;
  const end = text[j - 1] === '\\' ? j - 1 : j;
  if (end === start) return null;
  return { start, end, after: j + 1 };
}

/** Basic-auth pairs in code: `auth=("user", "pw")`, `HTTPBasicAuth(user, 'pw')`, `.auth = (…)`. */
export function findAuthPairs(text: string): Hit[] {
  const hits: Hit[] = [];
  const lower = text.toLowerCase();
  eachIndexOf(lower, 'auth', 4, (at) => {
    let nameStart = at;
    while (nameStart > 0 && /[a-z_]/.test(lower[nameStart - 1]!)) nameStart--;
    let nameEnd = at + 4;
    while (nameEnd < lower.length && /[a-z_]/.test(lower[nameEnd]!)) nameEnd++;
    if (!AUTH_CALLS.includes(lower.slice(nameStart, nameEnd))) return;
    let i = skipBlank(text, nameEnd);
    if (text[i] === '=') i = skipBlank(text, i + 1);
    if (text[i] !== '(' && text[i] !== '[') return;
    i = skipBlank(text, i + 1);
    // First item: a literal or a name.
    const first = quotedAt(text, i, 128);
    if (first !== null) i = first.after;
    else {
      const nameRun = /^[A-Za-z_][\w.]*/.exec(text.slice(i, i + 128));
      if (nameRun === null) return;
      i += nameRun[0].length;
    }
    i = skipBlank(text, i);
    if (text[i] !== ',') return;
    const second = quotedAt(text, skipBlank(text, i + 1));
    if (second === null) return;
    const value = text.slice(second.start, second.end);
    if (value.length >= 3 && !literalStandIn(value)) hits.push({ kind: 'password', start: second.start, end: second.end });
  });
  return hits;
}

const READS_STDIN = [
  /^(?:docker|podman|nerdctl|buildah|skopeo|oras)\s+login\b/,
  /^helm\s+registry\s+login\b/,
  /^sudo\s+-S\b/,
  /^passwd\s+--stdin\b/,
  /^chpasswd\b/,
  /^sudo\s+chpasswd\b/,
];

/** `echo "pw" | docker login --password-stdin`, `printf pw | sudo -S …`: the echoed word. */
export function findPipedPasswords(text: string): Hit[] {
  const hits: Hit[] = [];
  for (let pipe = text.indexOf('|'); pipe >= 0; pipe = text.indexOf('|', pipe + 1)) {
    if (text[pipe + 1] === '|' || text[pipe - 1] === '|') continue;
    const after = text.slice(skipBlank(text, pipe + 1), pipe + 80);
    if (!READS_STDIN.some((pattern) => pattern.test(after))) continue;
    // The command before the pipe, back to the line start.
    // Back to the line start (at most 300 characters: `echo pw` is right before the pipe).
    let start = pipe;
    while (start > 0 && pipe - start < 300 && text[start - 1] !== '\n' && !(text[start - 1] === 'n' && text[start - 2] === '\\') && text[start - 1] !== ';')
      start--;
    const list = words(text, start, pipe);
    const echo = list.findIndex((w) => /(?:^|["'(])(?:echo|printf)$/.test(w.text));
    if (echo < 0) continue;
    const value = list[list.length - 1];
    if (value === undefined || list.indexOf(value) <= echo) continue;
    const inside = inner(value);
    if (inside.text.length >= 4 && !literalStandIn(inside.text) && !inside.text.startsWith('-'))
      hits.push({ kind: 'password', start: inside.start, end: inside.end });
  }
  return hits;
}

const ENCODERS = ['btoa(', 'b64encode(', 'base64encode(', 'encodebytes(', 'buffer.from(', 'encodetostring(', '.encode('];

/** A `user:password` literal handed to a base64 encoder (`btoa('u:p')`, `b64encode(b"u:p")`). */
export function findEncodedPairs(text: string): Hit[] {
  const hits: Hit[] = [];
  const lower = text.toLowerCase();
  for (const encoder of ENCODERS) {
    eachIndexOf(lower, encoder, encoder.length, (at) => {
      let i = skipBlank(text, at + encoder.length);
      if (text[i] === 'b' && (isQuote(text[i + 1]) || (text[i + 1] === '\\' && isQuote(text[i + 2])))) i++;
      const literal = quotedAt(text, i);
      if (literal === null) return;
      const body = text.slice(literal.start, literal.end);
      const colon = body.indexOf(':');
      if (colon <= 0 || /\s/.test(body)) return;
      const password = body.slice(colon + 1);
      if (password.length >= 3 && !literalStandIn(password) && !password.startsWith('//')) {
        hits.push({ kind: 'password', start: literal.start + colon + 1, end: literal.end });
      }
    });
  }
  return hits;
}

const QUERY_SECRETS = new Set([
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'auth_token',
  'api_key',
  'apikey',
  'api-key',
  'signature',
  'sig',
  'x-amz-signature',
  'x-amz-security-token',
  'x-amz-credential',
  'x-goog-signature',
  'x-goog-credential',
  'password',
  'passwd',
  'pwd',
  'pass',
  'private_token',
  'client_secret',
  'secret',
  'code_verifier',
  'jwt',
]);
const QUERY_RANDOM_ONLY = new Set(['key', 'auth', 'session', 'sessionid']);

/** Credentials in URL query strings and form bodies (`?token=…`, `&X-Amz-Signature=…`). */
export function findQueryCredentials(text: string): Hit[] {
  const hits: Hit[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '?' && text[i] !== '&') continue;
    let eq = i + 1;
    while (eq < text.length && eq - i <= 40 && text[eq] !== '=') eq++;
    if (text[eq] !== '=' || eq - i > 40) continue;
    const name = text.slice(i + 1, eq).toLowerCase();
    if (!/^[a-z0-9_-]+$/.test(name)) continue;
    const password = name === 'password' || name === 'passwd' || name === 'pwd' || name === 'pass';
    // An unencoded `#` inside a password parameter does not end it.
    const stops = password ? '&"\'<> \t\n\\' : '&#"\'<> \t\n\\';
    let end = eq + 1;
    while (end < text.length && !stops.includes(text[end]!)) end++;
    const value = text.slice(eq + 1, end);
    if (literalStandIn(value) || value.length < (password ? 4 : 8)) continue;
    const random = /\d/.test(value) && /[A-Za-z]/.test(value);
    if (QUERY_SECRETS.has(name) ? password || random || value.length >= 20 : QUERY_RANDOM_ONLY.has(name) && random && value.length >= 16) {
      hits.push({ kind: 'url_credential', start: eq + 1, end });
    }
  }
  return hits;
}

/** `name: DB_PASSWORD` followed by `value: …` (Kubernetes, ECS, compose in long form). */
export function findEnvPairs(text: string): Hit[] {
  const hits: Hit[] = [];
  const lower = text.toLowerCase();
  eachIndexOf(lower, 'value', 5, (at) => {
    // Look back (at most 120 characters) for `name` and the variable name it gives.
    const back = text.slice(Math.max(0, at - 120), at);
    const nameAt = back.toLowerCase().lastIndexOf('name');
    if (nameAt < 0) return;
    const given = /^name\\?["']?\s*[:=]\s*\\?["']?([A-Za-z_][A-Za-z0-9_.-]*)/.exec(back.slice(nameAt));
    if (given === null || !/pass|pwd|secret|token|api_?key|apikey|credential|private_?key|auth/i.test(given[1]!)) return;
    let i = at + 5;
    while (text[i] === '"' || text[i] === "'" || text[i] === '\\') i++;
    i = skipBlank(text, i);
    if (text[i] !== ':' && text[i] !== '=') return;
    i = skipBlank(text, i + 1);
    while (text[i] === '"' || text[i] === "'" || text[i] === '\\') i++;
    let end = i;
    while (end < text.length && !'"\'\\ \t\n,}'.includes(text[end]!)) end++;
    const value = text.slice(i, end);
    if (value.length >= 4 && !literalStandIn(value)) hits.push({ kind: 'secret_assignment', start: i, end });
  });
  return hits;
}

/** A string piece at `at`: an optional backslash, a quote, 1–256 piece characters, the same quote. */
function pieceAt(text: string, at: number): { body: string; end: number } | null {
  let i = at;
  if (text[i] === '\\') i++;
  const quote = text[i];
  if (!isQuote(quote)) return null;
  let j = i + 1;
  while (j < text.length && j - i <= 257 && isLiteralChar(text.charCodeAt(j))) j++;
  let close = j;
  if (text[close] === '\\') close++;
  if (j === i + 1 || text[close] !== quote) return null;
  return { body: text.slice(i + 1, j), end: close + 1 };
}

/** Glue between pieces: blanks, `+`, `,`, `${`, `}`, `[`, `.concat(`. Returns where the next piece may start, and whether a comma was crossed. */
function skipGlue(text: string, at: number): { at: number; comma: boolean } {
  let i = at;
  let comma = false;
  for (;;) {
    const before = i;
    i = skipBlank(text, i);
    const ch = text[i];
    if (ch === '+' || ch === '}' || ch === '[') i++;
    else if (ch === ',') {
      comma = true;
      i++;
    } else if (ch === '$' && text[i + 1] === '{') i += 2;
    else if (text.startsWith('.concat(', i)) i += 8;
    if (i === before) return { at: i, comma };
  }
}

/** A key split into string pieces glued back at run time (see `skipGlue`). */
export function findSplitPieces(text: string): Hit[] {
  const hits: Hit[] = [];
  let i = 0;
  while (i < text.length) {
    const first = isQuote(text[i]) || (text[i] === '\\' && isQuote(text[i + 1])) ? pieceAt(text, i) : null;
    if (first === null) {
      i++;
      continue;
    }
    // What stands before the first piece: pieces glued by line breaks alone must start an expression.
    let back = i - 1;
    while (back >= 0 && (isSpace(text[back]) || (text[back - 1] === '\\' && 'nrt'.includes(text[back]!)))) back -= isSpace(text[back]) ? 1 : 2;
    const opensExpression = back < 0 || '(=[,:'.includes(text[back]!);
    const bodies = [first.body];
    let end = first.end;
    let operators = false;
    let listed = false;
    let concat = false;
    // At most 17 pieces, as a key is split in a few: a long list of words is not walked again and again.
    while (bodies.length < 17) {
      const glue = skipGlue(text, end);
      if (glue.at === end && !isQuote(text[end]) && text[end] !== '\\') break;
      const next = pieceAt(text, glue.at);
      if (next === null) break;
      const between = text.slice(end, glue.at);
      if (between.includes('.concat(')) concat = true;
      if (/[+,$}[]|\.concat\(/.test(between)) operators = true;
      listed ||= glue.comma;
      bodies.push(next.body);
      end = next.end;
    }
    const joined = bodies.join('');
    const rest = bodies.slice(1).join('');
    if (
      (operators || opensExpression) &&
      bodies.length >= 2 &&
      joined.length >= 20 &&
      rest.length >= 8 &&
      isGeneratedToken(rest.length >= 20 ? rest : joined)
    ) {
      const prefixed = findPrefixedTokens(joined).length > 0;
      if (prefixed || ((!listed || concat) && isGeneratedToken(joined))) {
        hits.push({ kind: 'split_key', start: i, end });
        i = end;
        continue;
      }
    }
    i = first.end;
  }
  return hits;
}
