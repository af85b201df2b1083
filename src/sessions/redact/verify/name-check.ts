import { createRequire } from 'node:module';
import nlp from 'compromise';

/**
 * The verifier's own check for given names left in a redacted file. It is looser than the
 * redactor's name rules on purpose and shares no code with them: where the redactor needs a cue
 * or an English sentence around a name, this check takes any word that a list of given names of
 * many countries holds (faker's locale data: Cyrillic, Greek, Turkish, Polish … as written, and
 * diacritics folded), and any capitalised word in a place only a person stands (`told <X>`,
 * `<X> deployed`) that the tagger's lexicon does not know as another word.
 */
export interface NameHit {
  start: number;
  end: number;
}

/** Given names as a list writes them (lower case), and those written in ASCII also by their letters alone. */
export interface GivenNames {
  written: ReadonlySet<string>;
  ascii: ReadonlySet<string>;
}

/** Letters a plain NFD fold leaves alone (ł, ı, ø, đ, ß, æ, œ), written as ASCII. */
const EXTRA_FOLD: Record<string, string> = { ł: 'l', ı: 'i', ø: 'o', đ: 'd', ß: 'ss', æ: 'ae', œ: 'oe', ð: 'd', þ: 'th' };

/** Lower case, marks dropped: a word with marks reads as its bare letters. */
export function folded(word: string): string {
  return word
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[łıøđßæœðþ]/gu, (c) => EXTRA_FOLD[c] ?? c);
}

/**
 * A word is in the list as written, or folded to ASCII when the list writes the name in ASCII
 * (lists often drop the marks). A name the list writes with other marks (Turkish `Şir`)
 * is not matched by a word of another language (Romanian `Șir`).
 */
export function inGivenNames(word: string, names: GivenNames): boolean {
  const lower = word.toLowerCase();
  return names.written.has(lower) || names.ascii.has(folded(word));
}

let loading: Promise<GivenNames> | undefined;

/** The first names of every faker locale (loaded once, on first use: ~0.4 s). */
export function loadGivenNames(): Promise<GivenNames> {
  loading ??= import('@faker-js/faker').then(({ allLocales }) => {
    const written = new Set<string>();
    const ascii = new Set<string>();
    for (const locale of Object.values(allLocales)) {
      const lists = (locale as { person?: { first_name?: Record<string, readonly string[]> } }).person?.first_name ?? {};
      for (const list of Object.values(lists))
        for (const name of list) {
          if (/\s/u.test(name) || name.length < 4) continue;
          written.add(name.toLowerCase());
          if (/^[A-Za-z'-]+$/u.test(name)) ascii.add(name.toLowerCase());
        }
    }
    return { written, ascii };
  });
  return loading;
}

let ENGLISH: ReadonlySet<string> | undefined;
function englishWord(word: string): boolean {
  ENGLISH ??= new Set(createRequire(import.meta.url)('an-array-of-english-words') as string[]);
  return ENGLISH.has(word.toLowerCase());
}

const LEXICON = (nlp.world() as { model: { one: { lexicon: Record<string, string> } } }).model.one.lexicon;
const PERSON_TAGS = new Set(['FirstName', 'MaleName', 'FemaleName', 'LastName', 'Person']);
/** The tagger knows the word, and not as a name (It, This, Everyone, Georgian), or reads it as a verb, adjective or adverb (Frequently). */
function otherWord(word: string): boolean {
  const tag = LEXICON[word.toLowerCase()];
  if (tag !== undefined) return !PERSON_TAGS.has(tag);
  if (!englishWord(word)) return false;
  const tags = (nlp(word.toLowerCase()).json() as Array<{ terms: Array<{ tags: string[] }> }>)[0]?.terms[0]?.tags ?? [];
  return tags.some((t) => t === 'Verb' || t === 'Adjective' || t === 'Adverb');
}

/** Assistants and tools a transcript addresses like people. */
const ASSISTANTS = new Set(['claude', 'codex', 'copilot', 'gemini', 'cursor', 'chatgpt', 'siri', 'alexa']);

/** A word: letters (any script), apostrophes and hyphens inside; not part of an identifier, path or address. */
const WORD = /(?<![\p{L}\p{M}\p{N}_./@\\#$]|[^\n]-)\p{L}[\p{L}\p{M}]*(?:['’-]\p{L}[\p{L}\p{M}]*)*(?![\p{L}\p{M}\p{N}_/@\\-]|\.\p{L})/gu;
const CAPITALISED = /^\p{Lu}[\p{Ll}\p{M}]+(?:['’-]\p{Lu}?[\p{Ll}\p{M}]+)*$/u;
const LOWER = /^[\p{Ll}\p{M}'’-]+$/u;

/** Words before a person's name, and verbs a person is the subject of. */
const BEFORE_PERSON = /(?:^|[^\p{L}])(?:told|tell|ask|asked|ping|pinged|thanks|thank you|cc|assigned to|waiting for|waiting on|hi|hey|dear)[ \t,]+$/iu;
const AFTER_PERSON =
  /^(?: and I\b|[ \t]+(?:said|says|knows|knew|wants|wanted|deployed|merged|fixed|pushed|approved|wrote|thinks|asked|reviewed|rewrote|is out|suggested|mentioned|reported|owns|prefers)\b)/u;
/** What stands right before a word of prose: the text's start, a space, a quote or a bracket, or a diff's or list's mark at a line's start. */
const PROSE_BEFORE = /(?:^|[\s"'“«(]|(?:^|\n)[ \t]*[+\-*>•])$/u;
/** The word before, also across a comment's line break (`Monte\n * Carlo`). */
const PREVIOUS_WORD = /(\p{L}[\p{L}\p{M}'’-]*)(?:[ \t]+|[ \t]*\n[\s*/#]*)$/u;
/** The next one or two words in the same clause (a comma does not end it). */
const NEXT_WORDS = /^(?:,?[ \t]+(\p{L}[\p{L}\p{M}'’-]*))(?:,?[ \t]+(\p{L}[\p{L}\p{M}'’-]*))?/u;

/** An English word the tagger reads as something other than a verb where it stands (`entropy` in "<Name> entropy in bits"). */
function englishNonVerb(sentence: string, word: string): boolean {
  if (!englishWord(word)) return false;
  const terms = (nlp(sentence).json() as Array<{ terms: Array<{ text: string; tags: string[] }> }>).flatMap((s) => s.terms);
  return !terms.find((t) => t.text === word)?.tags.includes('Verb');
}

/**
 * A listed given name written as a word of a sentence: not beside or joined (by a dash, a slash or
 * &) to another capitalised word, as in Monte Carlo or a method named after two people; and either
 * after a lower-case word, or the subject of a clause of three words or more whose next word is
 * not an English noun or adjective (a two-word message title, "<Word> unrecognised.", and an
 * eponym, "<Name> entropy", are not sentences about someone).
 */
function inSentence(text: string, start: number, end: number): boolean {
  const before = text.slice(Math.max(0, start - 40), start);
  if (!PROSE_BEFORE.test(before) || /^[–—/&-]/u.test(text.slice(end, end + 1))) return false;
  const previous = PREVIOUS_WORD.exec(before)?.[1];
  const after = text.slice(end, end + 60);
  const next = NEXT_WORDS.exec(after);
  const capital = (w: string | undefined) => w !== undefined && /^\p{Lu}/u.test(w);
  if (capital(previous) || capital(next?.[1])) return false;
  if (previous !== undefined && LOWER.test(previous)) return true;
  if (next?.[1] === undefined || next[2] === undefined || !LOWER.test(next[1]) || !LOWER.test(next[2])) return false;
  return !englishNonVerb(`${text.slice(start, end)}${next[0]}`, next[1]);
}

/**
 * Given names in `text`: a capitalised word the list holds (not an English dictionary word: Will,
 * Max, Grace stay) written in a sentence; and, in a person's place (`told <X>`, `<X> deployed`), a
 * capitalised word the tagger does not know as another word, or a lower-case one the list holds.
 */
export function findLooseNames(text: string, names: GivenNames): NameHit[] {
  const hits: NameHit[] = [];
  for (const m of text.matchAll(WORD)) {
    const word = m[0];
    if (word.length < 4) continue;
    const start = m.index;
    const end = start + word.length;
    if (ASSISTANTS.has(word.toLowerCase())) continue;
    const capitalised = CAPITALISED.test(word);
    const listed = inGivenNames(word, names) && !englishWord(word);
    if (capitalised && listed && !otherWord(word) && inSentence(text, start, end)) {
      hits.push({ start, end });
      continue;
    }
    if (!(capitalised && !otherWord(word)) && !(LOWER.test(word) && listed)) continue;
    const before = text.slice(Math.max(0, start - 20), start);
    const after = text.slice(end, end + 16);
    if (BEFORE_PERSON.test(before) || AFTER_PERSON.test(after)) hits.push({ start, end });
  }
  return hits;
}
