import { InvalidArgumentError } from '../../core/errors.js';
import { getOrInsert } from '../../core/get-or-insert.js';
import { editDistance } from '../../metrics/edit-distance.js';
import { type ClassCounts, type Piece, applyPass, placeholder } from './pieces.js';

export const IDENTITY_CLASSES = ['user', 'name', 'employer', 'workspace', 'host', 'project', 'email'] as const;

/** What an identity term stands for; decides its placeholder. */
export type IdentityClass = (typeof IDENTITY_CLASSES)[number];

export interface IdentityTerm {
  term: string;
  class: IdentityClass;
}

const CLASS_ALIASES: Record<string, IdentityClass> = {
  user: 'user',
  username: 'user',
  name: 'name',
  person: 'name',
  employer: 'employer',
  org: 'employer',
  organisation: 'employer',
  organization: 'employer',
  company: 'employer',
  workspace: 'workspace',
  host: 'host',
  hostname: 'host',
  project: 'project',
  codename: 'project',
  email: 'email',
};

/** The placeholder each class is replaced with (the ContextEcho dataset card's set). */
export const IDENTITY_PLACEHOLDER: Record<IdentityClass, string> = {
  user: '<USER>',
  name: '<USER>',
  employer: '<EMPLOYER>',
  workspace: '<WORKSPACE>',
  host: '<HOST>',
  project: '<PROJECT>',
  email: '<EMAIL>',
};

/** The valid classes and their aliases, for error messages. */
export function identityClassList(): string {
  const aliases = Object.keys(CLASS_ALIASES).filter((alias) => !(IDENTITY_CLASSES as readonly string[]).includes(alias));
  return `${IDENTITY_CLASSES.join(', ')} (aliases: ${aliases.join(', ')})`;
}

function nearestClass(word: string, maxDistance = 2): string | null {
  let best: string | null = null;
  let bestDistance = maxDistance + 1;
  for (const alias of Object.keys(CLASS_ALIASES)) {
    // Levenshtein over UTF-16 code units.
    const distance = editDistance(word.split(''), alias.split(''));
    if (distance < bestDistance) {
      best = alias;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Parses `class=term` (e.g. `employer=Acme`); a bare term (no `=`) is a `user` term.
 * The class is checked: an unknown class before `=` (`employr=Acme`), or a class
 * written with `:` (`project:Bluefin`), is an error listing the valid classes — a typo
 * must never turn into a literal term that matches nothing. A term that itself holds
 * `=` is written with its class (`user=a=b`).
 */
export function parseIdentityTerm(spec: string): IdentityTerm {
  const eq = spec.indexOf('=');
  let cls: IdentityClass = 'user';
  let term = spec;
  if (eq >= 0) {
    const written = spec.slice(0, eq).trim();
    const alias = CLASS_ALIASES[written.toLowerCase()];
    if (alias === undefined) {
      const near = nearestClass(written.toLowerCase());
      throw new InvalidArgumentError(
        'identity',
        `unknown identity class "${written}" in "${spec}"${near === null ? '' : ` (did you mean ${near}?)`}; valid classes: ${identityClassList()}`,
      );
    }
    cls = alias;
    term = spec.slice(eq + 1);
  } else {
    const colon = /^\s*([A-Za-z][A-Za-z_-]{1,15})\s*:\s*\S/.exec(spec);
    const word = colon?.[1]?.toLowerCase();
    const near = word === undefined ? null : CLASS_ALIASES[word] !== undefined ? word : nearestClass(word, 1);
    if (near !== null) {
      throw new InvalidArgumentError(
        'identity',
        `"${spec}" looks like a class written with ":"; write ${near}=${spec.slice(spec.indexOf(':') + 1).trim()} (valid classes: ${identityClassList()})`,
      );
    }
  }
  term = term.trim();
  if (term.length < 2) {
    throw new InvalidArgumentError('identity', `term "${spec}" is too short (at least 2 characters after the class)`);
  }
  if (/[\r\n]/.test(term)) throw new InvalidArgumentError('identity', 'a term cannot contain a line break');
  return { term, class: cls };
}

export function normalizeIdentities(items: readonly (IdentityTerm | string)[] | undefined): IdentityTerm[] {
  return (items ?? []).map((item) => parseIdentityTerm(typeof item === 'string' ? item : `${item.class}=${item.term}`));
}

// First names that are also everyday words: redacted in full-name forms only.
const COMMON_WORD_PARTS = new Set([
  'will',
  'mark',
  'bill',
  'rose',
  'grace',
  'may',
  'june',
  'april',
  'hope',
  'joy',
  'faith',
  'dawn',
  'art',
  'max',
  'pat',
  'sky',
  'summer',
  'autumn',
  'river',
  'page',
  'hunter',
  'chase',
  'drew',
  'gene',
  'major',
  'young',
  'white',
  'black',
  'green',
  'brown',
  'gray',
  'grey',
  'king',
  'long',
  'price',
  'rich',
  'ray',
  'guy',
  'jack',
  'frank',
  'lane',
  'case',
  'code',
  'test',
  'data',
  'user',
  'admin',
  'the',
  'and',
  'for',
  'van',
  'von',
  'der',
  'den',
  'del',
  'de',
  'la',
  'le',
  'di',
  'da',
]);
// Company-form words: "Acme Labs Inc" still redacts "Acme", never "Labs" or "Inc" alone.
const COMPANY_WORDS = new Set([
  'inc',
  'llc',
  'ltd',
  'gmbh',
  'corp',
  'corporation',
  'company',
  'co',
  'labs',
  'lab',
  'group',
  'ag',
  'sa',
  'plc',
  'technologies',
  'technology',
  'tech',
  'systems',
  'software',
  'solutions',
  'holdings',
  'international',
  'industries',
  'global',
  'university',
  'institute',
  'of',
  'the',
  'and',
  'ai',
  'research',
  'studio',
  'studios',
  'partners',
  'consulting',
  'services',
  'digital',
  'media',
  'bank',
  'capital',
]);

function stripDiacritics(text: string): string {
  return text.normalize('NFD').replace(/\p{M}+/gu, '');
}

function escapeRegex(text: string): string {
  // Only syntax characters: the `u` flag rejects escapes such as `\-`.
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

const SEPARATOR = '(?:[._-]|\\s+)?';

interface Candidate {
  source: string;
  length: number;
  cls: IdentityClass;
  /** A lower-case literal the match must contain (a cheap pre-check). */
  anchor: string;
}

function longestPart(text: string): string {
  return text
    .split(/[\s._-]+/)
    .reduce((best, part) => (part.length > best.length ? part : best), '')
    .toLowerCase();
}

/** The regex sources a term contributes: itself (separators flexible), joined forms, parts. */
function candidatesFor(term: IdentityTerm): Candidate[] {
  const out: Candidate[] = [];
  const forms = new Set([term.term, stripDiacritics(term.term)]);
  for (const form of forms) {
    if (term.class === 'email' || term.class === 'host') {
      out.push({ source: escapeRegex(form), length: form.length, cls: term.class, anchor: form.toLowerCase() });
      if (term.class === 'email') {
        const local = form.split('@')[0] ?? '';
        if (local.length >= 3 && !GENERIC_LOCAL_PARTS.has(local.toLowerCase())) {
          out.push(...candidatesFor({ term: local, class: 'user' }));
        }
      }
      continue;
    }
    const parts = form.split(/[\s._-]+/).filter((part) => part.length > 0);
    if (parts.length === 0) continue;
    out.push({ source: parts.map(escapeRegex).join(SEPARATOR), length: form.length, cls: term.class, anchor: longestPart(form) });
    // A domain given as an organisation or project also goes by its name label
    // ("acme-corp.com" → "acme-corp"), never by its top-level domain.
    const domain = /^([\p{L}\p{N}][\p{L}\p{N}-]*)(?:\.[\p{L}\p{N}-]+)*\.[A-Za-z]{2,}$/u.exec(form);
    if (domain !== null && term.class !== 'user' && term.class !== 'name' && domain[1]!.length >= 4 && !COMPANY_WORDS.has(domain[1]!.toLowerCase())) {
      const label = domain[1]!;
      const labelParts = label.split('-').filter((part) => part.length > 0);
      out.push({ source: labelParts.map(escapeRegex).join(SEPARATOR), length: label.length, cls: term.class, anchor: longestPart(label) });
    }
    if (parts.length >= 2 && (term.class === 'name' || term.class === 'user')) {
      const first = parts[0]!;
      const last = parts[parts.length - 1]!;
      // first-initial + last (asmith, a.smith) and last.first are common login forms.
      if (last.length >= 3) {
        const anchor = longestPart(form);
        out.push({ source: `${escapeRegex(first[0]!)}[._-]?${escapeRegex(last)}`, length: last.length + 1, cls: term.class, anchor: last.toLowerCase() });
        out.push({ source: `${escapeRegex(last)}${SEPARATOR}${escapeRegex(first)}`, length: form.length, cls: term.class, anchor });
      }
    }
    // Distinctive words of a multi-word name ("Vandelay Industries" → "Vandelay"). Only
    // whole words count: a domain or a dashed name is one term ("acme-corp.com" never
    // yields "com").
    const words = form.split(/\s+/).filter((word) => word.length > 0);
    if (words.length >= 2 && (term.class === 'name' || term.class === 'employer')) {
      const skip = term.class === 'name' ? COMMON_WORD_PARTS : COMPANY_WORDS;
      for (const part of words) {
        if (part.length >= 3 && !skip.has(part.toLowerCase())) {
          out.push({ source: escapeRegex(part), length: part.length, cls: term.class, anchor: part.toLowerCase() });
        }
      }
    }
  }
  return out;
}

const GENERIC_LOCAL_PARTS = new Set(['info', 'admin', 'contact', 'hello', 'support', 'noreply', 'no-reply', 'mail', 'team', 'dev']);

// Priority when two classes claim the same text: the more specific placeholder wins.
const CLASS_PRIORITY: IdentityClass[] = ['email', 'host', 'project', 'workspace', 'employer', 'name', 'user'];

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const UPPER = /\p{Lu}/u;
const LOWER_OR_DIGIT = /[\p{Ll}\p{N}]/u;
const LOWER = /\p{Ll}/u;

/**
 * Whether `text[start, end)` stands as a term of its own: its neighbours are not letters
 * or digits, or the edge is a camelCase hump — `AcmeCorpClient` and `newAcmeCorp` hold
 * "Acme Corp" (a lower-case letter or digit meets an upper-case one, or an upper-case
 * run ends before a capitalised word: `ACMEClient`). `malice` never holds "alice".
 */
export function termBoundaries(text: string, start: number, end: number): boolean {
  const before = start > 0 ? text[start - 1]! : '';
  const first = text[start] ?? '';
  const last = end > start ? text[end - 1]! : '';
  const after = text[end] ?? '';
  const leftOk =
    before === '' ||
    !LETTER_OR_DIGIT.test(before) ||
    (LOWER_OR_DIGIT.test(before) && UPPER.test(first)) ||
    (UPPER.test(before) && UPPER.test(first) && LOWER.test(text[start + 1] ?? ''));
  if (!leftOk) return false;
  return (
    after === '' ||
    !LETTER_OR_DIGIT.test(after) ||
    (LOWER_OR_DIGIT.test(last) && UPPER.test(after)) ||
    (UPPER.test(last) && UPPER.test(after) && LOWER.test(text[end + 1] ?? ''))
  );
}

/**
 * A compiled set of identity terms, matched case-insensitively on Unicode letter/digit
 * boundaries. `_`, `-` and `.` count as boundaries, so "alice" is found in
 * `alice_backup` and `alice.smith@` but never inside `malice`. Candidates run longest
 * first (ties: the more specific class), each only when its anchor literal is present.
 */
export class IdentityMatcher {
  private readonly sources: Candidate[] = [];
  private readonly compiled = new Map<number, RegExp>();

  constructor(terms: readonly IdentityTerm[]) {
    const seen = new Set<string>();
    for (const term of terms) {
      for (const candidate of candidatesFor(term)) {
        const key = candidate.source.toLowerCase();
        if (seen.has(key)) continue;
        seen.add(key);
        this.sources.push(candidate);
      }
    }
    this.sources.sort((a, b) => b.length - a.length || CLASS_PRIORITY.indexOf(a.cls) - CLASS_PRIORITY.indexOf(b.cls));
  }

  get size(): number {
    return this.sources.length;
  }

  private patternOf(index: number): RegExp {
    // Boundaries are checked by \`termBoundaries\` (case-aware, which \`i\` regexes cannot be).
    return getOrInsert(this.compiled, index, () => new RegExp(`(?:${this.sources[index]!.source})`, 'giu'));
  }

  apply(pieces: Piece[], counts: ClassCounts, lower: string): Piece[] {
    let out = pieces;
    this.sources.forEach((candidate, index) => {
      if (!lower.includes(candidate.anchor)) return;
      // A `name` is counted with `user`.
      const cls = candidate.cls === 'name' ? 'user' : candidate.cls;
      out = applyPass(out, this.patternOf(index), (match) =>
        termBoundaries(match.input, match.index, match.index + match[0].length) ? [placeholder(IDENTITY_PLACEHOLDER[candidate.cls], cls, counts)] : null,
      );
    });
    return out;
  }
}
