import { eachIndexOf, type Hit } from './detectors.js';

/**
 * Looks for identity terms the user gave, without the redactor's regex: lower-cased
 * search, then a check that the neighbours are not letters or digits. Multi-word terms
 * are also searched joined by `.`, `_`, `-`, nothing, or a space.
 */
export interface VerifyTerm {
  term: string;
  label: string;
}

function plain(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
}

// Words that are not identifying on their own ("Acme Labs Inc" → only "acme").
const GENERIC_WORDS = new Set([
  'inc',
  'llc',
  'ltd',
  'gmbh',
  'corp',
  'company',
  'labs',
  'group',
  'industries',
  'technologies',
  'systems',
  'software',
  'solutions',
  'international',
  'global',
  'university',
  'institute',
  'research',
  'the',
  'and',
  'will',
  'mark',
  'grace',
  'hope',
  'brown',
  'green',
  'white',
  'black',
  'young',
  'king',
  'long',
]);

/** How a term can be written: as given, joined forms, and (for people and organisations) its distinctive words. */
export function spellings(term: string, label = 'user'): string[] {
  const base = plain(term.trim());
  const words = base.split(/[\s._-]+/).filter((w) => w.length > 0);
  const out = new Set<string>([base]);
  if (words.length > 1) for (const joiner of ['.', '_', '-', '', ' ']) out.add(words.join(joiner));
  // Distinctive words: whole words only, so a domain ("acme-corp.com") is never cut into "com".
  const spaced = base.split(/\s+/).filter((w) => w.length > 0);
  if (spaced.length > 1 && (label === 'name' || label === 'employer')) {
    for (const word of spaced) if (word.length >= 4 && !GENERIC_WORDS.has(word)) out.add(word);
  }
  return [...out].filter((s) => s.length >= 2);
}

const letterOrDigit = /[\p{L}\p{N}]/u;
const upper = /\p{Lu}/u;
const lowerOrDigit = /[\p{Ll}\p{N}]/u;

/**
 * Neighbours that are not letters or digits, or a camelCase hump at the edge
 * (`AcmeCorpClient` holds "acmecorp"; `malice` never holds "alice").
 */
function standsAlone(text: string, start: number, end: number): boolean {
  const before = text[start - 1] ?? ' ';
  const after = text[end] ?? ' ';
  const first = text[start] ?? ' ';
  const last = text[end - 1] ?? ' ';
  const leftHump = lowerOrDigit.test(before) && upper.test(first);
  const rightHump = lowerOrDigit.test(last) && upper.test(after);
  const leftAcronym = upper.test(before) && upper.test(first) && /\p{Ll}/u.test(text[start + 1] ?? '');
  const rightAcronym = upper.test(last) && upper.test(after) && /\p{Ll}/u.test(text[end + 1] ?? '');
  return (!letterOrDigit.test(before) || leftHump || leftAcronym) && (!letterOrDigit.test(after) || rightHump || rightAcronym);
}

export function findTerms(text: string, terms: readonly VerifyTerm[]): Hit[] {
  if (terms.length === 0) return [];
  const haystack = plain(text);
  // NFD stripping can change the length; fall back to the lower-cased text when it does.
  const aligned = haystack.length === text.length ? haystack : text.toLowerCase();
  const hits: Hit[] = [];
  for (const { term, label } of terms) {
    for (const spelling of spellings(term, label)) {
      eachIndexOf(aligned, spelling, 1, (at) => {
        if (standsAlone(text, at, at + spelling.length)) hits.push({ kind: `identity:${label}`, start: at, end: at + spelling.length });
      });
    }
  }
  return hits;
}
