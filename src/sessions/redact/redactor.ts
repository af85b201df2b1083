import { redactCredentialForms } from './credentials.js';
import { redactEmails } from './emails.js';
import { redactHighEntropy } from './entropy.js';
import { type IdentityTerm, IdentityMatcher, normalizeIdentities } from './identity.js';
import { discoverHosts, redactNetwork } from './network.js';
import { type DiscoveredTerms, discoverFromDashFolders, discoverFromPaths, emptyDiscovery, redactHomePaths } from './paths.js';
import { isWholeBase64, splitLongRuns } from './long-runs.js';
import { type ClassCounts, type Piece, joinPieces, placeholder } from './pieces.js';
import { type PiiKind, redactPii } from './pii.js';
import { compileQuotes, redactQuotes } from './quotes.js';
import { redactDataUris, redactKeys, redactSecrets, secretKindForMember } from './secrets.js';

export interface RedactOptions {
  /** Identity seeds: `IdentityTerm`s or `class=term` strings (`employer=Acme`, bare = user). */
  identities?: readonly (IdentityTerm | string)[];
  /**
   * Learn usernames, workspace folders and ssh hosts from the text itself and redact
   * them everywhere (default true). `redactFile` learns from the whole file first.
   */
  discover?: boolean;
  /** Passages the user marked as third-party text → `<REDACTED_QUOTE>`. */
  quotes?: readonly string[];
  /** Kinds of personal data to replace (pii.ts: names, phones, addresses, ips, cards, ids, ibans); default none here, all from the CLI. */
  pii?: Iterable<PiiKind>;
}

export interface RedactedText {
  text: string;
  /** Replacements per class; never the replaced values. */
  counts: ClassCounts;
}

export interface RedactedLine extends RedactedText {
  /** False when the line was not valid JSON and was redacted as raw text. */
  json: boolean;
}

const OPAQUE_MEMBERS = new Set(['signature', 'encrypted_content']);
const OPAQUE_VALUE = /^[A-Za-z0-9+/_=-]{16,}$/;

/** Names of discovered workspaces that are distinctive enough to hunt outside paths. */
function distinctiveWorkspace(name: string): boolean {
  return (/[-_.0-9]/.test(name) && name.length >= 5) || name.length >= 8;
}

/**
 * A redactor compiled once for a set of options; `learn` adds terms discovered in
 * text (the whole file is learned before the first line is redacted).
 */
export class Redactor {
  private readonly identities: IdentityTerm[];
  private readonly discoverEnabled: boolean;
  private readonly quotePattern: RegExp | null;
  private readonly discovered: DiscoveredTerms = emptyDiscovery();
  private matcher: IdentityMatcher | null = null;
  private readonly pii: ReadonlySet<PiiKind>;

  constructor(options: RedactOptions = {}) {
    this.identities = normalizeIdentities(options.identities);
    this.discoverEnabled = options.discover ?? true;
    this.quotePattern = compileQuotes(options.quotes ?? []);
    this.pii = new Set(options.pii ?? []);
  }

  /** Collects usernames, workspaces and hosts from `text` (no-op when discovery is off). */
  learn(text: string): void {
    if (!this.discoverEnabled) return;
    const before = this.discoveredSize();
    discoverFromPaths(text, this.discovered);
    discoverFromDashFolders(text, this.discovered);
    discoverHosts(text, this.discovered.hosts);
    if (this.discoveredSize() !== before) this.matcher = null;
  }

  /** How many distinct terms were discovered, per kind (never the terms). */
  discoveredCounts(): { users: number; workspaces: number; hosts: number } {
    return {
      users: this.discovered.users.size,
      workspaces: this.discovered.workspaces.size,
      hosts: this.discovered.hosts.size,
    };
  }

  private discoveredSize(): number {
    return this.discovered.users.size + this.discovered.workspaces.size + this.discovered.hosts.size;
  }

  private identityMatcher(): IdentityMatcher {
    if (this.matcher === null) {
      const terms: IdentityTerm[] = [...this.identities];
      for (const user of this.discovered.users) if (user.length >= 3) terms.push({ term: user, class: 'user' });
      for (const host of this.discovered.hosts) terms.push({ term: host, class: 'host' });
      for (const workspace of this.discovered.workspaces) {
        if (distinctiveWorkspace(workspace)) terms.push({ term: workspace, class: 'workspace' });
      }
      this.matcher = new IdentityMatcher(terms);
    }
    return this.matcher;
  }

  /** Redacts one string (a JSON leaf, a key, or a raw line). */
  redactString(text: string, counts: ClassCounts): string {
    if (text.length === 0) return text;
    if (isWholeBase64(text)) {
      placeholder('<BASE64_DATA>', 'base64_data', counts);
      return '<BASE64_DATA>';
    }
    const lower = text.toLowerCase();
    // Linear first: huge base64 runs and no-whitespace stretches never reach a regex whole.
    let pieces: Piece[] = splitLongRuns(text, counts);
    pieces = redactQuotes(pieces, this.quotePattern, counts);
    pieces = redactKeys(pieces, counts, lower);
    pieces = redactDataUris(pieces, counts, lower);
    pieces = redactSecrets(pieces, counts, lower);
    pieces = redactCredentialForms(pieces, counts, lower);
    pieces = redactNetwork(pieces, counts, lower);
    pieces = redactEmails(pieces, counts, lower);
    pieces = redactPii(pieces, counts, this.pii);
    pieces = redactHomePaths(pieces, counts, this.discovered, lower);
    pieces = this.identityMatcher().apply(pieces, counts, lower);
    pieces = redactHighEntropy(pieces, counts);
    return joinPieces(pieces);
  }

  redactText(text: string): RedactedText {
    const counts: ClassCounts = {};
    return { text: this.redactString(text, counts), counts };
  }

  /**
   * Redacts every string of a JSON line (keys included) and nothing else: numbers,
   * whitespace and key order are copied byte for byte. A line that is not JSON is
   * redacted as raw text and kept.
   */
  redactJsonLine(line: string): RedactedLine {
    const counts: ClassCounts = {};
    if (!isJson(line)) return { text: this.redactString(line, counts), counts, json: false };
    const transform = (value: string, member: string | undefined) => {
      // Opaque provider blobs (thinking signatures, encrypted reasoning) of any length.
      if (member !== undefined && OPAQUE_MEMBERS.has(member) && OPAQUE_VALUE.test(value)) {
        return placeholder('<BASE64_DATA>', 'base64_data', counts).text;
      }
      const kind = member === undefined ? null : secretKindForMember(member, value);
      if (kind === null) return this.redactString(value, counts);
      return placeholder(`<SECRET:${kind}>`, `secret:${kind}`, counts).text;
    };
    return { text: rewriteJsonStrings(line, transform), counts, json: true };
  }
}

function isJson(line: string): boolean {
  if (line.trim().length === 0) return false;
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

/** End index (exclusive) of the JSON string token that starts at `start` (a quote). */
function stringEnd(text: string, start: number): number {
  let at = start + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote < 0) throw new Error('unterminated JSON string in validated JSON');
    let backslashes = 0;
    for (let i = quote - 1; i > start && text[i] === '\\'; i--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

/**
 * Rewrites each string token of valid JSON through `transform` (which also gets the
 * member name when the string is an object member's value); unchanged strings keep
 * their original escapes. A rewritten key that collides with a key already in the same
 * object gets a `~2`, `~3` … suffix so no member is lost.
 */
export function rewriteJsonStrings(json: string, transform: (value: string, member: string | undefined) => string): string {
  const out: string[] = [];
  const keys: Array<Map<string, boolean> | null> = [];
  let member: string | undefined;
  let i = 0;
  let runStart = 0;
  const n = json.length;
  while (i < n) {
    const ch = json.charCodeAt(i);
    if (ch === 34 /* " */) {
      if (i > runStart) out.push(json.slice(runStart, i));
      const end = stringEnd(json, i);
      const token = json.slice(i, end);
      const value = JSON.parse(token) as string;
      let k = end;
      while (k < n && (json[k] === ' ' || json[k] === '\t' || json[k] === '\r' || json[k] === '\n')) k++;
      const scope = keys[keys.length - 1];
      const isKey = json[k] === ':' && scope !== undefined && scope !== null;
      const redacted = transform(value, isKey ? undefined : member);
      member = isKey ? value : undefined;
      if (isKey && scope !== undefined && scope !== null) {
        let key = redacted;
        // Rename when redaction made the clash (either key was rewritten); an original
        // duplicate key is left as the input had it.
        if (scope.has(key) && (redacted !== value || scope.get(key) === true)) {
          let suffix = 2;
          while (scope.has(`${redacted}~${suffix}`)) suffix++;
          key = `${redacted}~${suffix}`;
        }
        scope.set(key, key !== value);
        out.push(key === value ? token : JSON.stringify(key));
      } else {
        out.push(redacted === value ? token : JSON.stringify(redacted));
      }
      i = end;
      runStart = i;
      continue;
    }
    if (ch === 123 /* { */) keys.push(new Map());
    else if (ch === 91 /* [ */) keys.push(null);
    else if (ch === 125 /* } */ || ch === 93 /* ] */) keys.pop();
    if (ch !== 58 /* : */ && ch !== 32 && ch !== 9 && ch !== 10 && ch !== 13) member = undefined;
    i++;
  }
  if (n > runStart) out.push(json.slice(runStart));
  return out.join('');
}

/** One-shot redaction of a text (discovery runs on the text itself first). */
export function redactText(text: string, options: RedactOptions = {}): RedactedText {
  const redactor = new Redactor(options);
  redactor.learn(text);
  return redactor.redactText(text);
}

/** One-shot redaction of one JSONL line. */
export function redactJsonLine(line: string, options: RedactOptions = {}): RedactedLine {
  const redactor = new Redactor(options);
  redactor.learn(line);
  return redactor.redactJsonLine(line);
}
