import { isIPv4, isIPv6 } from 'node:net';
import nlp from 'compromise';
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { findPhoneNumbersInText } from 'libphonenumber-js';
import { nationalPhoneSpans } from './national-phones.js';
import { cuedPiiSpans, demonymOrPlace, englishWord, escapeView, LEXICON } from './pii-cued.js';
import { luhnValid, nordicIdSpans, spansOf } from './nordic-ids.js';
import { type ClassCounts, joinPieces, keep, type Piece, spliceSpans } from './pieces.js';
import { worldIdSpans } from './world-ids.js';

/**
 * Personal data in transcripts (docs/sessions.md, "Personal data"): person names (compromise's
 * offline English NLP), phone numbers (libphonenumber-js), postal addresses, IPv4 / IPv6
 * addresses (node:net), payment card numbers (Luhn), national ids (US SSN, UK NINO, Spanish DNI
 * and NIE with their check letter, Italian codice fiscale with its check letter, Swedish personnummer, Finnish HETU, Polish PESEL
 * and Danish CPR with their dates and checks (nordic-ids.ts), and a 9–11 digit
 * number after words naming an id) and IBANs (ibantools' checksum, upper or lower case); data told
 * by its context (@handles, cued phones, CSV columns, names in any script in person fields, cued
 * addresses) in pii-cued.ts. `findPii` returns the spans; the
 * redactor replaces them and the verifier reports any that remain.
 */

import { PII_KINDS, type PiiKind } from './pii-kinds.js';

export { PII_KINDS, type PiiKind, parsePiiKinds } from './pii-kinds.js';

const PLACEHOLDER: Record<PiiKind, string> = {
  names: '<PERSON>',
  phones: '<PHONE>',
  addresses: '<ADDRESS>',
  ips: '<IP>',
  cards: '<CARD>',
  ids: '<NATIONAL_ID>',
  ibans: '<IBAN>',
};

export interface PiiSpan {
  kind: PiiKind;
  start: number;
  end: number;
}

/** Issuer prefixes of the card networks (Visa, Mastercard, Maestro, Mir, Amex, Discover, JCB, Diners, UnionPay, RuPay): 50–69 as Maestro and RuPay span them. */
const CARD_PREFIX = /^(?:4|5\d|2[2-7]|3[47]|3[068]|35|6\d)/u;
const CARD = /(?<![\w.-])\d(?:[ -]?\d){12,18}(?![\w-]|\.\d)/gu;
const IBAN = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b/gu;
const SSN = /(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])/gu;
const NINO = /\b(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/gu;
const DNI = /\b\d{8}-?[A-Z]\b/gu;
const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';
/** Spanish NIE (foreigners' DNI): X, Y or Z (read as 0, 1, 2), seven digits, the DNI check letter. */
const NIE = /\b[XYZ]-?\d{7}-?[A-Z]\b/gu;
/** An IBAN written in lower case (checked as upper case). */
const IBAN_LOWER = /\b[a-z]{2}\d{2}(?: ?[a-z0-9]{4}){2,7}(?: ?[a-z0-9]{1,3})?\b/gu;
/** Italian codice fiscale: surname and name letters, birth year, month letter, day, place code, check letter. */
const CODICE_FISCALE = /\b[A-Z]{6}\d{2}[ABCDEHLMPRST]\d{2}[A-Z]\d{3}[A-Z]\b/gu;
const CF_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];

/** The codice fiscale's last letter matches its check (odd places by the table, even by value). */
function codiceFiscaleValid(code: string): boolean {
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const c = code.charCodeAt(i);
    const value = c >= 65 ? c - 65 : c - 48;
    sum += i % 2 === 0 ? CF_ODD[value]! : value;
  }
  return code.charCodeAt(15) - 65 === sum % 26;
}
/** Loopback, unspecified and private ranges: the host pass (network.ts) handles those as local hosts. */
const PRIVATE_V4 = /^(?:0\.|127\.|10\.|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.|169\.254\.)/u;
/** Unique-local (fc00::/7) and link-local (fe80::/10) IPv6 addresses: inside one network, like the private IPv4 ranges. */
const PRIVATE_V6 = /^(?:f[cd][0-9a-f]{0,2}|fe[89ab][0-9a-f]):/iu;
/**
 * Four small numbers (each at most 30, e.g. 4.2.6.1 or 1.2.3.4): a specification's step or section
 * number or a version in code and prose far more often than an address (on installed packages'
 * code every such match was one); the few public addresses of this shape are left.
 */
const SECTION_NUMBER = /^(?:(?:[12]?\d|30)\.){3}(?:[12]?\d|30)$/u;
const IPV4 = /(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d)/gu;
/** An interface id derived from a MAC address (EUI-64: ff:fe in its middle): a device's own hardware address, even in a link-local address. */
const EUI64 = /[0-9a-f]{0,2}ff:fe[0-9a-f]{2}:/iu;
/**
 * A link-local or unique-local address whose interface id is more than a small number (fe80::1,
 * fd00::2 are set by hand): a random or hardware-derived id names one device, and a unique-local
 * prefix carries a random 40-bit site id, so such an address is as identifying as a public one.
 */
function deviceInterfaceId(v: string): boolean {
  // Seven hex digits or more after the prefix's first group (fd00:ec2::254, a cloud's fixed metadata address, has six).
  return (
    v
      .split(':')
      .slice(1)
      .join('')
      .replace(/[^0-9a-f]/giu, '').length >= 7
  );
}
/** The eight 16-bit groups of an IPv6 address node:net accepts (an embedded IPv4 as two groups). */
function v6Groups(v: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/u.exec(v);
  const body =
    dotted === null ? v : `${v.slice(0, dotted.index)}${((+dotted[1]! << 8) | +dotted[2]!).toString(16)}:${((+dotted[3]! << 8) | +dotted[4]!).toString(16)}`;
  const [head = '', tail] = body.split('::');
  const part = (s: string) => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}
/**
 * Addresses reserved for a purpose, not a host (the special-purpose registry): unspecified and
 * loopback however written (`0000:…:0001`), and the bare IPv4-mapped and NAT64 prefixes
 * (`::ffff:0:0`, `64:ff9b::`, `64:ff9b:1::`) that code writes as constants.
 */
function specialPurposeV6(v: string): boolean {
  const g = v6Groups(v);
  if (g.slice(0, 7).every((x) => x === 0) && g[7]! <= 1) return true;
  const zeroFrom = (i: number) => g.slice(i).every((x) => x === 0);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff && zeroFrom(6)) return true;
  return g[0] === 0x64 && g[1] === 0xff9b && (zeroFrom(2) || (g[2] === 1 && zeroFrom(3)));
}
/**
 * A link-local address with its zone (`%eth0`, `%4`): copied from a machine's interface list or a
 * log, so its interface id is that device's unless it is a small number set by hand (fe80::1%lo0).
 * The zone is taken with it.
 */
const IPV6_ZONED = /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}%[\w.-]{1,16}/gu;
function zonedDeviceAddress(v: string): boolean {
  const address = v.slice(0, v.indexOf('%'));
  const interfaceId = address.split(':').slice(1).join('').replace(/^0+/u, '');
  return isIPv6(address) && PRIVATE_V6.test(address) && interfaceId.length >= 4;
}
/** An IPv6 address of a host on the internet, or of one device (a private address with a device's interface id). */
function publicV6(v: string): boolean {
  return (
    (v.match(/:/gu)?.length ?? 0) >= 2 &&
    isIPv6(v) &&
    /[0-9a-fA-F]{2}/u.test(v) &&
    !specialPurposeV6(v) &&
    (!PRIVATE_V6.test(v) || EUI64.test(v) || deviceInterfaceId(v))
  );
}
const IPV6 = /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{0,4})(?![\w:])/gu;
const STREET_TYPES =
  'Street|St\\.?|Avenue|Ave\\.?|Road|Rd\\.?|Boulevard|Blvd\\.?|Lane|Ln\\.?|Drive|Dr\\.?|Way|Court|Ct\\.?|Place|Pl\\.?|Terrace|Square|Highway|Hwy\\.?|Parkway|Pkwy\\.?|Circle|Close|Crescent|Row|Gardens';
const US_ADDRESS = new RegExp(
  String.raw`\b\d{1,5}[A-Z]?\s+(?:[NSEW]\.?\s+)?(?:[A-Z][a-z]+\.?\s+){1,3}(?:${STREET_TYPES})(?![A-Za-z])(?:,?\s+(?:Apt|Apartment|Suite|Ste|Unit|Flat|#)\.?\s*[\w-]+)?(?:,\s*[A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2})?(?:\s+[NSEW]{1,2}\b)?(?:,?\s+[A-Z]{2}(?![\dA-Za-z]))?(?:,?\s+\d{5}(?:-\d{4})?)?`,
  'gu',
);
const EU_ADDRESS =
  /\b[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm)\s+\d{1,4}[a-z]?(?:,\s*(?:D-)?\d{4,5}\s+[A-ZÄÖÜ][a-zäöüß]+)?|\b\d{1,4}(?:\s?(?:bis|ter|quater))?,?\s+(?:rue|avenue|boulevard|place|chemin|impasse|allée|quai|cours|route|via|calle|avenida|plaza)\s+(?:[a-zA-Zéèàç'-]+\s?){1,4}(?:,\s*\d{5}\s+[A-Z][a-zé'-]+)?/gu;
/** A street (any words) and number, then a five-digit postcode and a town (German, French, Italian, Spanish style: street and number, comma, postcode and town). */
const POSTCODE_ADDRESS = /\b(?:\p{Lu}[\p{Ll}ß]+\s){0,2}\p{Lu}[\p{Ll}ß]+\s\d{1,4}[a-z]?,\s*\d{5}\s+\p{Lu}[\p{Ll}]+/gu;
/**
 * The same with what else a house number carries in northern and central Europe: a staircase
 * or entrance letter and a flat number (Finnish "<street> 12 B 5"), a second number after a slash
 * or a hyphen (Polish "<street> 84/92"), a street abbreviation before it (ul., al., pl., os.), and
 * the postcode written 00-514 (Poland) or of four digits (Austria, Switzerland, the Nordic
 * countries, Belgium); with four digits the town must not be an English word (so "Version 3,
 * 2024 Edition" stays).
 */
const EUROPEAN_ADDRESS =
  /(?:\b(?:ul|al|pl|os)\.\s*)?(?<![\p{L}\d])(?:\p{Lu}[\p{Ll}ß]+\s){0,2}\p{Lu}[\p{Ll}ßąćęłńóśźż]+\s\d{1,4}[a-zA-Z]?(?:(?:\/|-)\d{1,4}|\s[A-Z](?:\s?\d{1,3})?)?,\s*(\d{2}-\d{3}|\d{4,5})\s+(\p{Lu}[\p{Ll}]+)/gu;
/** A Canadian postal code (its letters exclude D F I O Q U, and W Z first) after a province's two letters. */
const CA_POSTCODE = String.raw`\b(?:AB|BC|MB|NB|NL|NS|NT|NU|ON|PE|QC|SK|YT),?\s+[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z] ?\d[ABCEGHJ-NPRSTV-Z]\d\b`;
/** A Canadian address: a house number and street, a town, the province and postal code; or the last two alone. */
const CA_ADDRESS = new RegExp(String.raw`(?:\b\d{1,5}[A-Z]?,?\s+[^\n,]{3,50}?,\s*\p{Lu}[\p{L}'’.-]+(?:\s\p{Lu}[\p{L}'’.-]+){0,2},?\s+)?${CA_POSTCODE}`, 'gu');
/** An Australian address: an optional level or unit, a house number and street, a suburb, the state and a four-digit postcode. */
const AU_ADDRESS = new RegExp(
  String.raw`(?:\b(?:Level|Unit|Suite|Shop)\s+\d{1,3},\s*)?\b\d{1,5}[A-Z]?\s+(?:\p{Lu}\p{Ll}+\s+){1,3}(?:${STREET_TYPES})(?![A-Za-z]),?\s+(?:\p{Lu}\p{Ll}+\s){1,3}(?:NSW|VIC|QLD|SA|WA|TAS|NT|ACT)\s+\d{4}\b`,
  'gu',
);
const US_STATES =
  'AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|PR';
/**
 * A US address told by its last line: a house number (or a PO box) and a street of any words,
 * the town, the state's two letters and the ZIP code. The state and ZIP together are what make it
 * an address, so the street may be of any type (1 Infinite Loop, 7 Sumac Trail).
 */
const US_STATE_ZIP_ADDRESS = new RegExp(
  String.raw`(?:\b\d{1,6}[A-Z]?\s+[^\n,;"{}]{3,60}?|\b(?:P\.?\s?O\.?\s?Box|Post Office Box)\s+\d{1,6}),\s*(?:[^\n,;"{}]{2,40},\s*)?\p{Lu}[\p{L}.'’-]+(?:\s\p{Lu}[\p{L}.'’-]+){0,2},?\s+(?:${US_STATES})\s+\d{5}(?:-\d{4})?\b`,
  'gu',
);
/** A PO box, with or without the town after it. */
const PO_BOX = /\b(?:P\.?\s?O\.?\s?Box|Post Office Box|Postfach|Boîte postale|BP|Apartado(?: de correos)?|Casilla)\s+\d{1,6}\b/gu;
/** A Dutch address: street and number, then the postcode (four digits, two letters) and the town. */
const NL_ADDRESS =
  /\b\p{Lu}[\p{Ll}'’-]+(?:\s\p{Lu}?[\p{Ll}'’-]+){0,2}\s\d{1,4}[a-zA-Z]?(?:-\d{1,4})?,?\s+[1-9]\d{3}\s?(?!SA|SD|SS)[A-Z]{2}\s+\p{Lu}[\p{Ll}-]+/gu;
const UK_POSTCODE = /\b[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}\b/gu;
/** Street type first (Spanish, Catalan, Italian, Portuguese): "Calle de <Street> <number>, <floor>, <postcode> <town>"; a five-digit postcode and town are required. */
const STREET_FIRST_ADDRESS =
  /\b(?:Calle|Avenida|Avda\.|Paseo|Plaza|Camino|Carrer|Via|Viale|Piazza|Corso|Largo|Rua)\s+(?:(?:de|del|la|las|los|di|della|delle|dei|do|da|dos)\s+)*\p{Lu}[\p{L}'’-]+(?:\s+\p{Lu}[\p{L}'’-]+){0,2},?\s+\d{1,4}[a-zA-Z]?(?:,\s*[^,\n]{1,15}?)?,\s*\d{5}\s+\p{Lu}\p{Ll}+/gu;
const ADDRESSES = [US_ADDRESS, EU_ADDRESS, POSTCODE_ADDRESS, UK_POSTCODE, CA_ADDRESS, NL_ADDRESS, AU_ADDRESS, STREET_FIRST_ADDRESS, US_STATE_ZIP_ADDRESS];
/**
 * A nine- to eleven-digit number (or an SSN with spaces) right after words naming a national id
 * (SSN, BSN, national id, tax id, id number): without the words such a number is as often an
 * order or row id, so only the context makes it one.
 */
const CONTEXT_ID =
  /\b(?:ssn|social security(?: number| no\.?)?|bsn|burgerservicenummer|national[ _-]?id(?:[ _-]?(?:number|no\.?))?|id[ _-]?number|tax[ _-]?id|steuer-?id)\b[^\d\n]{0,12}?(\d{3}[ -]?\d{2}[ -]?\d{4}|\d{9,11})(?![\d\w-])/dgiu;

function regexSpans(text: string, pattern: RegExp, kind: PiiKind, accept: (value: string) => boolean = () => true): PiiSpan[] {
  return spansOf(text, pattern, (m) => accept(m[0])).map((span) => ({ kind, ...span }));
}

/** 00 or "00 " before a country code (not inside a longer number, nor a 00 group inside a number already written with a +). */
const INTERNATIONAL_00 = /(?<![\w+.:-]|\d[ .-])00 ?(?=[1-9]\d{0,2}[ .-]?\d)/gu;

function phoneSpans(text: string): PiiSpan[] {
  if (!/\d\d/u.test(text)) return [];
  const out: PiiSpan[] = [];
  // The international prefix written 00 (0044 20 …, 00 44 20 …) read as a + of the same length, so
  // libphonenumber parses the country code; the span then starts at the first 0.
  const prefixed = new Map<number, number>();
  const view = text.replace(INTERNATIONAL_00, (whole: string, offset: number) => {
    prefixed.set(offset + whole.length - 1, offset);
    return `${' '.repeat(whole.length - 1)}+`;
  });
  // Leniency "possible" (a length the country's plan allows), then: a number written with its
  // country code (+44 …, 0044 …) is taken when possible, any other only when valid. A range the
  // metadata does not list as allocated yet (new UK mobile blocks: +44 7911 9…) is still someone's
  // number when written in international form; a national-format digit run needs the stricter check.
  for (const found of findPhoneNumbersInText(view, { defaultCountry: 'US', leniency: 'POSSIBLE' } as Parameters<typeof findPhoneNumbersInText>[1])) {
    let raw = view.slice(found.startsAt, found.endsAt);
    if (!raw.startsWith('+') && !found.number.isValid()) continue;
    // A comma ends a phone number in prose (the number, then a comma and a street number).
    if (raw.includes(',')) raw = raw.slice(0, raw.indexOf(',')).trimEnd();
    // Written as a phone number: a + or separators between digit groups (a bare digit run in code or a timestamp is not one).
    if (!/^\+|\d[\s().-]+\d|^\(\d/u.test(raw)) continue;
    if (/^\d{4}-\d{2}-\d{2}/u.test(raw)) continue;
    // Decimal numbers in arithmetic (206.835 - 1.015) are not phone numbers.
    if (raw.includes('.') && !/^(?:\+\d{1,3}[.\s])?\(?\d{3}\)?\.\d{3}\.\d{4}$/u.test(raw)) continue;
    out.push({ kind: 'phones', start: prefixed.get(found.startsAt) ?? found.startsAt, end: found.startsAt + raw.length });
  }
  return out;
}

/** Lines worth handing to the NLP tagger: prose with a capitalised word (code, JSON and paths rarely hold a person's name in prose form). */
// A capital after a space, quote, bracket or any sign that is not a letter or digit: a diff line
// (+Name), a list item (-Name, *Name) or a cell (|Name) starts a word as a space does.
const CAPITALISED = /(?:^|[^\p{L}\d_])[A-Z][a-z]{1,}(?:\s+[A-Z][a-z'-]+)?/u;
const CODE_LINE = /::|\w\.\w+\(|\b(?:const|let|var|function|import|export|return|def|class|public|private|new|await|async|throw)\s/u;

/**
 * Proper names a coding transcript is full of that the tagger reads as a person's name: the
 * assistants and models (Claude Code, Gemma), methods named after people (Monte Carlo, Shannon
 * entropy, Markov chain). A word is followed by a space when tested alone.
 */
const NOT_PEOPLE = /^(?:Claude|Codex|Gemini|Copilot|Cursor|Monte|Gemma|Llama|Mistral|Shannon|Bayes|Markov|Gauss|Euler|Pearson|Spearman|Wilcoxon|Student)\s/u;
const INITIALLED_NAME = /(?<![\p{L}\d_])\p{Lu}\p{Ll}[\p{Ll}'’-]+\s\p{Lu}\.\s\p{Lu}\p{Ll}*['’]?\p{Lu}?[\p{Ll}'’-]+(?![\p{L}\d_])/gu;
const ADDRESSED =
  /\b(?:[Aa]sk|[Aa]sked|[Pp]ing|[Pp]inged|[Tt]ell|[Tt]old|[Tt]hanks|[Tt]hank you|[Hh]i|[Hh]ey|[Dd]ear|cc|[Mm]orning|[Ee]vening|[Aa]fternoon|[Cc]heers|[Tt]hx|[Yy]o|[Cc]ongrats|[Ww]elcome|[Pp]er|(?:[Cc]heck(?:ed)?|[Ss]ync(?:ed)?|[Pp]air(?:ed)?|[Ss]poke|[Tt]alk(?:ed)?|[Mm]eet(?:ing)?|[Mm]et) with|(?:[Ll]oop(?:ed)?|[Bb]ring|[Bb]rought) in|(?:[Tt]alk(?:ed)?|[Ss]poke|[Rr]each(?:ed)? out|[Ff]orward(?:ed)?(?: (?:this|it))?|[Aa]ssign(?:ed)?(?: (?:this|it))?|[Hh]and(?:ed)?(?: (?:this|it))?(?: off| over)?|[Tt]hanks|[Aa]ccording) to|(?:[Ww]aiting|[Bb]locked|[Dd]epends) on),?\s+(\p{Lu}\p{Ll}{2,})(?![\p{L}\d_.])|(?<![\p{L}\d_.])(\p{Lu}\p{Ll}{2,})\s+(?:said|says|wrote|asked|mentioned|thinks|suggested|reported|approved|confirmed|agreed|noted|replied|commented|requested|reviewed|owns|prefers|wants|promised|signed off|is out|will (?:own|check|take|handle|review|look))\b/gu;
const CUE_WORDS =
  /^(?:Ask|Asked|Ping|Pinged|Tell|Told|Thanks|Thank|Hi|Hey|Hello|Dear|Cc|Call|Email|Message|Morning|Evening|Afternoon|Cheers|Thx|Yo|Congrats|Welcome|Per)$/u;
/** Words the tagger's lexicon knows (as any part of speech): not an unknown given name. */
const NAME_TAGS = new Set(['FirstName', 'MaleName', 'FemaleName', 'LastName', 'Person', 'Honorific']);
/** A word the tagger's lexicon does not know, or knows only as (part of) a name: not an English word such as "Start". */
function nameOrUnknown(word: string): boolean {
  const known = LEXICON[word.toLowerCase().replace(/\.$/u, '')];
  return known === undefined || NAME_TAGS.has(known) || word.length <= 2;
}
/** A name word: a capital, then letters (apostrophes, hyphens and dots inside). */
const GIVEN_NAME = /^(?:O['’]|D['’]|Mc|Mac)?\p{Lu}[\p{Ll}'’.-]+(?:-\p{Lu}[\p{Ll}'’.-]+)*$/u;
/** A name word as written: a capital, letters, and a double-barrelled part (García-López). */
const NAME_WORD = String.raw`\p{Lu}[\p{Ll}'’]+(?:-\p{Lu}?[\p{Ll}'’]+)*`;
const PARTICLE = '(?:van|von|der|den|de|del|della|di|da|dos|du|le|la|bin|ibn|al|ter|ten)';
/**
 * A name after a field that names a person's role (git trailers, reviewers, assignees): two to
 * four name words, particles between them ("Author: <Given> van der <Surname>").
 */
const ROLE_NAME = new RegExp(
  String.raw`(?:\b(?:Author|Co-authored-by|Signed-off-by|Reviewed-by|Acked-by|Reported-by|Tested-by|Suggested-by|[Rr]eviewers?|[Aa]ssignees?|[Mm]aintainers?)\s*[:=]\s*)(${NAME_WORD}(?:\s+(?:${PARTICLE}\s+)*${NAME_WORD}){1,3})(?![\p{L}\d_])`,
  'dgu',
);
/** Particles and a surname after a name (" van der <Surname>", " Ó <Surname>"). */
const NAME_TAIL = new RegExp(String.raw`^(?: (?:${PARTICLE}|Ó|Ní|Nic|Mac|Mc|Ua|Uí))+ ${NAME_WORD}(?![\p{L}\d_])`, 'u');
/** A CSV cell holding a name: two or three name words between commas. */
const CSV_NAME = new RegExp(String.raw`^${NAME_WORD}(?:\s+(?:${PARTICLE}\s+)*${NAME_WORD}){1,3}$`, 'u');

/** Irish and Scottish surname prefixes written as a word of their own (Ó Briain, Mac Giolla). */
const PREFIX = '(?:(?:Ó|Ní|Nic|Mac|Mc|Ua|Uí) )?';
/**
 * A person's name after a cue that only a name follows: a salutation (Dear Dr.), a copy line
 * (cc:), a signature dash at a line's start, an @ mention, or a JSON field naming a person
 * (`"name": "…"`, escaped quotes too). Two to four name words on one line; each must be a word the
 * tagger's lexicon does not know as English (so "Dear Team Lead" or "name": "Build Step" stay).
 */
const CUED_NAME = new RegExp(
  String.raw`(?:\b(?:Dear|[Cc]c|CC|Attn|Attention)\b:?[ \t]+(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?[ \t]+)?|(?:^|\\n)[ \t]*(?:—|–|--)[ \t]*|(?<![\w.@])@|\\*"(?:name|full_?name|fullName|display_?[Nn]ame|author_?[Nn]ame|real_?[Nn]ame|contact_?[Nn]ame)\\*"[ \t]*:[ \t]*\\*")(${PREFIX}${NAME_WORD}(?: (?:${PARTICLE} )*${PREFIX}${NAME_WORD}){1,3})(?![\p{L}\d_])`,
  'dgmu',
);

/** The tagger reads the word, in lower case, as a verb, adjective or adverb (deprecated, async): an English word, not a name. */
function englishForm(word: string): boolean {
  const tags = (nlp(word.toLowerCase()).json() as Array<{ terms: Array<{ tags: string[] }> }>)[0]?.terms[0]?.tags ?? [];
  return tags.some((t) => t === 'Verb' || t === 'Adjective' || t === 'Adverb');
}

function cuedNameSpans(text: string): PiiSpan[] {
  const out: PiiSpan[] = [];
  for (const m of text.matchAll(CUED_NAME)) {
    const name = m[1]!;
    const words = name.split(/[ -]+/u).filter((w) => !/^(?:Ó|Ní|Nic|Mac|Mc|Ua|Uí)$/u.test(w) && /^\p{Lu}/u.test(w));
    if (NOT_PEOPLE.test(`${name} `) || !words.every((w) => nameOrUnknown(w) && !englishForm(w))) continue;
    const [start, end] = m.indices![1]!;
    out.push({ kind: 'names', start, end });
  }
  return out;
}

/** A name or handle in a code annotation's brackets: `TODO(<name>)`, `FIXME(<name>):`. */
const ANNOTATION_NAME = /\b(?:TODO|FIXME|XXX|HACK|NOTE|BUG|REVIEW)\(\s*@?(\p{L}[\p{L}'’-]*(?:[ ._]\p{L}[\p{L}'’-]*){0,3})\s*\)/dgu;
/** Words after which a person's name follows, in lower case too (account holder: <given> <surname>). */
const LOWER_CUED_NAME =
  /(?:\b(?:holder|customer|patient|user(?:name)?|contact|owner|login as|logged in as|signed in as|log in as)\s*:?[ \t]+)(\p{Ll}[\p{Ll}'’-]{2,}(?: \p{Ll}[\p{Ll}'’-]{2,}){1,2})(?![\p{L}\d_])/dgu;
/** A greeting at a line's or sentence's start, then a given name in lower case (thanks <given>!). */
const LOWER_GREETED = /(?:^|\n|\\n|[.!?]\s)[ \t]*(?:hi|hey|hello|thanks|thank you|thx|morning|cheers|yo)[, \t]+(\p{Ll}[\p{Ll}'’-]{2,})(?=[\s,.!?:;)]|$)/dgiu;
/**
 * A given name the tagger's lexicon genders and no English dictionary holds (Svetlana, not Max or
 * Will), written alone between lower-case words: a person, wherever the sentence puts it.
 */
const LONE_WORD = /(?<![\p{L}\d_.@/-]|\p{Lu}\p{L}*[\s*/#]+)(\p{Lu}\p{Ll}{2,})(?![\p{L}\d_/-]|[ \t]\p{Lu})/dgu;
/** Two or three name words, then a verb a person is the subject of. */
const NAME_BEFORE_VERB = new RegExp(
  String.raw`(?<![\p{L}\d_])(${NAME_WORD}(?: ${NAME_WORD}){1,2}) (?:said|says|wrote|asked|mentioned|thinks|suggested|reported|approved|confirmed|agreed|noted|replied|commented|requested|reviewed|owns|opened|committed|merged|pushed|fixed|prefers|wants|is out|will)\b`,
  'dgu',
);
/** Two or three name words in a row none of which is an English word (the tagger's names aside), wherever they stand. */
const NAME_RUN = new RegExp(String.raw`(?<![\p{L}\d_.-])${NAME_WORD}(?: ${NAME_WORD}){1,5}(?![\p{L}\d_'’-])`, 'gu');

/** The tagger's lexicon knows the word as a given name or surname. */
function knownName(word: string): boolean {
  return word.split('-').some((part) => NAME_TAGS.has(LEXICON[part.toLowerCase()] ?? ''));
}
/**
 * What may stand before a run of words no dictionary holds for it to be read as a name when the
 * tagger knows none of them: a line's or list item's start, a greeting, or a word saying a person
 * follows (reviewer, assignee, by, with, from …). Without one, such a run is as often words of
 * another language (a German message in a locale file: "Ungültige Eingabe").
 */
const RUN_CUE =
  /(?:(?:^|\n|\\n)[ \t]*(?:[-*+>•][ \t]*(?:\[[ xX]\][ \t]*)?)?|\b(?:[Hh]i|[Hh]ey|[Hh]ello|[Dd]ear|[Tt]hanks|[Tt]hank you|[Mm]orning|[Ee]vening|[Cc]heers|[Rr]egards|[Bb]est)[,!]?[ \t]+|\b(?:reviewers?|assignees?|owners?|authors?|users?|customers?|contacts?|patients?|members?|names?|by|with|from|to|cc|met|meet|ask|ping|tell|told|call|and|or)\b["'\\]*[ \t]*[:=]?[ \t]*["'\\]*)$/iu;

function nameLike(word: string): boolean {
  // A double-barrelled word (Dong-hyun, Ha-eun) is name-like when one of its parts is.
  if (word.includes('-')) return word.split('-').some((part) => part.length > 1 && nameLike(part));
  const known = LEXICON[word.toLowerCase()];
  return known === 'MaleName' || known === 'FemaleName' || known === 'FirstName' || known === 'LastName' || (known === undefined && !englishWord(word));
}

/** Names the tagger does not read from their place: in a code annotation, after a lower-case cue, before a verb, or as a run of words no dictionary holds. */
function shapedNameSpans(text: string): PiiSpan[] {
  const out: PiiSpan[] = [];
  const push = (m: RegExpExecArray) => {
    const [start, end] = m.indices![1]!;
    out.push({ kind: 'names', start, end });
  };
  for (const pattern of [LOWER_GREETED, LONE_WORD]) {
    for (const m of text.matchAll(pattern)) {
      const word = m[1]!;
      const known = LEXICON[word.toLowerCase()];
      const gendered = known === 'MaleName' || known === 'FemaleName';
      if (NOT_PEOPLE.test(`${word[0]!.toUpperCase()}${word.slice(1)} `) || englishWord(word)) continue;
      if (pattern === LONE_WORD ? gendered : gendered || (known === undefined && !englishForm(word))) push(m);
    }
  }
  for (const pattern of [ANNOTATION_NAME, LOWER_CUED_NAME, NAME_BEFORE_VERB]) {
    for (const m of text.matchAll(pattern)) {
      const words = m[1]!.split(/[ ._]+/u).filter((w) => w.length > 0);
      if (NOT_PEOPLE.test(`${m[1]!} `)) continue;
      // The first word names the person (a given name, or one no dictionary holds); a surname may be an English word (Park, Baker).
      if (!nameLike(words[0]!) || (pattern === LOWER_CUED_NAME && !words.every(nameLike))) continue;
      push(m);
    }
  }
  // Within a run of capitalised words (Hi <Given> <Surname>, Meeting With <Given> <Surname>), the two
  // or three in a row that no dictionary holds.
  for (const m of text.matchAll(NAME_RUN)) {
    const words = m[0].replace(/['’]+$/u, '').split(' ');
    const ok = words.map((w) => w.length > 2 && nameLike(w) && !englishForm(w) && !demonymOrPlace(w));
    let offset = m.index;
    for (let i = 0; i < words.length; ) {
      let j = i;
      while (j < words.length && ok[j]) j++;
      const run = words.slice(i, j).join(' ');
      if (
        j - i >= 2 &&
        j - i <= 3 &&
        !NOT_PEOPLE.test(`${run} `) &&
        (words.slice(i, j).some(knownName) || RUN_CUE.test(text.slice(Math.max(0, offset - 40), offset)))
      ) {
        out.push({ kind: 'names', start: offset, end: offset + run.length });
      }
      for (const w of words.slice(i, Math.max(j, i + 1))) offset += w.length + 1;
      i = Math.max(j, i + 1);
    }
  }
  return out;
}

/** The segment at `start` (length `length`) of `text` is a table cell: a bar on each side, spaces aside. */
function tableCell(text: string, start: number, length: number): boolean {
  return /\|[ \t]*$/u.test(text.slice(Math.max(0, start - 4), start)) && /^[ \t]*\|/u.test(text.slice(start + length, start + length + 4));
}

/** Most lower-case words of the text are English words (or it has fewer than three to judge by). */
function englishProse(text: string): boolean {
  const words = text.match(/(?<![\p{L}\d_])\p{Ll}{2,}(?![\p{L}\d_])/gu) ?? [];
  if (words.length < 3) return true;
  return words.filter((w) => englishWord(w)).length * 2 >= words.length;
}

function nameSpans(text: string): PiiSpan[] {
  const out: PiiSpan[] = [];
  // Prose segments: code punctuation, quotes and JSON syntax cut a line into pieces, so a name in
  // a shell argument, a nested JSON string or a comment is read in its own words.
  // Escaped line breaks and tabs (\n in a JSON string inside a JSON string) read as spaces of the same length, so offsets hold.
  const view = text.replace(/\\[nrt]/gu, '  ');
  for (const m of view.matchAll(/[^\n{}[\]"`<>|;=()\\]+/gu)) {
    const piece = m[0];
    if (piece.length < 5 || piece.length > 4000 || !CAPITALISED.test(piece) || CODE_LINE.test(piece)) continue;
    const people = new Set<string>();
    // A field holding only a name (a table cell, "Author: …"): two or three name-shaped words, one of
    // them a given name or surname the tagger knows.
    const alone = piece.trim().replace(/^[A-Za-z-]+:\s+/u, '');
    if (/^\p{Lu}[\p{Ll}'’-]+(?:\s+\p{Lu}\.?)?\s+\p{Lu}[\p{Ll}'’-]+$/u.test(alone) && !NOT_PEOPLE.test(alone)) {
      const tagged = (nlp(alone).json() as Array<{ terms: Array<{ tags: string[] }> }>).flatMap((sentence) => sentence.terms);
      if (tagged[0]?.tags.includes('FirstName') || tagged.at(-1)?.tags.includes('LastName')) people.add(alone.replace(/\s+/gu, ' '));
      // A table cell (between two bars) holding two words the tagger's lexicon does not know at all:
      // a name it has never seen ("| <Given> <Surname> | backend |"), as a cell rarely holds anything else of that shape.
      else if (tableCell(view, m.index, piece.length) && alone.split(/\s+/u).every((w) => w.length > 2 && LEXICON[w.toLowerCase()] === undefined)) {
        people.add(alone.replace(/\s+/gu, ' '));
      }
    }
    // After a role field (Author:, Signed-off-by:, reviewers:): the field says a person follows, so
    // the first name word must only not be an English word the lexicon knows (Platform Team is not a person).
    for (const r of piece.matchAll(ROLE_NAME)) {
      const name = r[1]!;
      if (
        !NOT_PEOPLE.test(`${name} `) &&
        name
          .split(/[\s-]+/u)[0]!
          .split('-')
          .every(nameOrUnknown)
      )
        people.add(name.replace(/\s+/gu, ' '));
    }
    // CSV rows (two commas or more, no space after them): a cell of two or three name words the lexicon does not know as English words.
    if (/,\S[^,]*,/u.test(piece) && !/, /u.test(piece)) {
      for (const cell of piece.split(',')) {
        const value = cell.trim();
        if (
          CSV_NAME.test(value) &&
          !NOT_PEOPLE.test(`${value} `) &&
          value
            .split(/[\s-]+/u)
            // A surname after a particle (van der Berg) may be an English word; the particle says it is a name.
            .filter((w, i, all) => /^\p{Lu}/u.test(w) && !new RegExp(`^${PARTICLE}$`, 'u').test(all[i - 1] ?? ''))
            .every(nameOrUnknown)
        )
          people.add(value.replace(/\s+/gu, ' '));
      }
    }
    // A given name and surname around a middle initial ("<Given> J. <Surname>"): the initial's dot cuts
    // the tagger's sentence, so the shape is read here.
    for (const found of piece.matchAll(INITIALLED_NAME)) if (!NOT_PEOPLE.test(found[0])) people.add(found[0].replace(/\s+/gu, ' '));
    // A capitalised word the tagger does not know, where a sentence addresses or quotes a person
    // ("ask <name> whether", "Thanks <name>,", "<name> said").
    for (const found of piece.matchAll(ADDRESSED)) {
      const word = found[1] ?? found[2];
      if (word === undefined || NOT_PEOPLE.test(`${word} `)) continue;
      const known = LEXICON[word.toLowerCase()];
      if (known === 'MaleName' || known === 'FemaleName' || (known === undefined && !englishWord(word))) people.add(word);
    }
    // The English tagger reads only English prose: in a sentence of another language (a locale's
    // message, "<Word> trị không hợp lệ") it takes a capitalised first word for a given name.
    if (!englishProse(piece)) {
      for (const name of people)
        for (const span of regexSpans(piece, new RegExp(`(?<![\\p{L}\\d_])${name.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')}(?![\\p{L}\\d_])`, 'gu'), 'names'))
          out.push({ kind: 'names', start: span.start + m.index, end: span.end + m.index });
      continue;
    }
    const doc = nlp(piece);
    // Two or three capitalised words in a row that the tagger reads as proper nouns, none of them an
    // English word (an-array-of-english-words, inflections included) unless the tagger knows it as
    // a name: a name it has never seen ("add <Given> <Surname> as", "Per <Given> <Surname> the
    // flag"). The tagger's own lexicon holds few nouns, so "Timeout Error" or "Signature Version"
    // would pass it; the word list keeps them out.
    const terms = (doc.json() as Array<{ terms: Array<{ text: string; pre: string; post: string; tags: string[] }> }>).flatMap((sentence) => sentence.terms);
    for (let i = 0; i < terms.length; ) {
      let j = i;
      while (j < terms.length && terms[j]!.tags.includes('ProperNoun') && GIVEN_NAME.test(terms[j]!.text) && (j === i || terms[j - 1]!.post === ' ')) j++;
      const run = terms.slice(i, j).map((t) => t.text);
      if (
        run.length >= 2 &&
        run.length <= 3 &&
        !NOT_PEOPLE.test(`${run[0]} `) &&
        run.every((w) => w.length > 2 && (NAME_TAGS.has(LEXICON[w.toLowerCase()] ?? '') || !englishWord(w)))
      )
        people.add(run.join(' '));
      i = Math.max(j, i + 1);
    }
    for (const person of doc.people().json() as Array<{ terms: Array<{ text: string; tags: string[] }> }>) {
      const terms = person.terms;
      const words = terms.map((t) => t.text.replace(/['’]s$/u, '').replace(/[^\p{L}'’.-]+/gu, ''));
      // A given name the tagger knows, written alone ("ask <name>", "<name> said"): the tagger reads it
      // as a person from its place in the sentence, not from capitals alone.
      if (terms.length === 1) {
        // Only a name the tagger's lexicon gives a gender: its ungendered given names are as often English words (mark, skip, grant).
        const tags = terms[0]!.tags;
        if ((tags.includes('MaleName') || tags.includes('FemaleName')) && GIVEN_NAME.test(words[0]!) && !NOT_PEOPLE.test(`${words[0]} `)) people.add(words[0]!);
        continue;
      }
      // A full name: from the first given name the tagger knows, then at least one more capitalised word.
      let first = terms.findIndex((t) => t.tags.includes('FirstName'));
      // Neither known, but every word read as part of a person's name in context ("add <Given> <Surname> as").
      if (first < 0 && terms.every((t) => t.tags.includes('Person')) && words.every(nameOrUnknown)) first = 0;
      // A given name the tagger does not know, before a surname it does.
      if (first < 0 && terms.at(-1)?.tags.includes('LastName')) first = terms.length - 2;
      if (first < 0 || first === terms.length - 1) continue;
      const name = words.slice(first);
      // Capitalised name words; a middle initial (J.) only between two of them.
      if (!name.every((w, i) => GIVEN_NAME.test(w) || (i > 0 && i < name.length - 1 && /^\p{Lu}\.?$/u.test(w)))) continue;
      if (NOT_PEOPLE.test(name.join(' '))) continue;
      people.add(name.join(' '));
    }
    for (const name of people) {
      // The words as written, an initial with or without its dot.
      const written = name
        .split(' ')
        .map((w) => w.replace(/\.$/u, '').replace(/[.*+?^${}()|[\]\\]/gu, '\\$&'))
        .join('\\.?\\s+');
      // A given name alone right after a capitalised word is the end of another proper name (Monte Carlo)
      const pattern = new RegExp(`(?<![\\p{L}\\d_])${written}(?![\\p{L}\\d_])`, 'gu');
      for (const span of regexSpans(piece, pattern, 'names')) {
        const start = span.start + m.index;
        // (Also across a line break: the first word ending one comment line, the second starting the next.) Not after a greeting or request (Thanks, Hi, Ask).
        const before = /(\p{Lu}\p{Ll}*)[\s*/#]*\s$/u.exec(view.slice(Math.max(0, start - 40), start))?.[1];
        if (!name.includes(' ') && before !== undefined && !CUE_WORDS.test(before)) continue;
        out.push({ kind: 'names', start, end: span.end + m.index });
      }
    }
  }
  return out;
}

/** The personal data of the given kinds in `text`, as non-overlapping spans in text order. */
export function findPii(original: string, kinds: ReadonlySet<PiiKind> = new Set(PII_KINDS)): PiiSpan[] {
  const spans: PiiSpan[] = [];
  // Escaped line breaks and tabs read as the breaks they stand for (escapeView), so a value at a
  // line's start inside JSON in JSON (`\n2a01:…`, `\nthanks @…`) has its boundary.
  const text = escapeView(original);
  if (kinds.has('ibans')) {
    spans.push(...regexSpans(text, IBAN, 'ibans', (v) => isValidIBAN(electronicFormatIBAN(v) ?? '')));
    spans.push(...regexSpans(text, IBAN_LOWER, 'ibans', (v) => isValidIBAN(electronicFormatIBAN(v.toUpperCase()) ?? '')));
  }
  if (kinds.has('cards')) {
    spans.push(
      ...regexSpans(text, CARD, 'cards', (v) => {
        const digits = v.replace(/\D/gu, '');
        return digits.length >= 13 && digits.length <= 19 && CARD_PREFIX.test(digits) && luhnValid(digits) && !/^(\d)\1+$/u.test(digits);
      }),
    );
  }
  if (kinds.has('ids')) {
    for (const pattern of [SSN, NINO]) spans.push(...regexSpans(text, pattern, 'ids'));
    spans.push(...regexSpans(text, DNI, 'ids', (v) => DNI_LETTERS[Number(v.slice(0, 8)) % 23] === v.at(-1)));
    spans.push(
      ...regexSpans(text, NIE, 'ids', (v) => {
        const digits = v.replace(/[^\d]/gu, '');
        return DNI_LETTERS[Number(`${'XYZ'.indexOf(v[0]!)}${digits}`) % 23] === v.at(-1);
      }),
    );
    spans.push(...regexSpans(text, CODICE_FISCALE, 'ids', codiceFiscaleValid));
    for (const span of [...nordicIdSpans(text), ...worldIdSpans(text)]) spans.push({ kind: 'ids', ...span });
    for (const m of text.matchAll(CONTEXT_ID)) spans.push({ kind: 'ids', start: m.indices![1]![0], end: m.indices![1]![1] });
  }
  if (kinds.has('ips')) {
    spans.push(...regexSpans(text, IPV4, 'ips', (v) => isIPv4(v) && !PRIVATE_V4.test(v) && !SECTION_NUMBER.test(v)));
    spans.push(...regexSpans(text, IPV6, 'ips', publicV6), ...regexSpans(text, IPV6_ZONED, 'ips', zonedDeviceAddress));
  }
  if (kinds.has('addresses')) {
    for (const pattern of [...ADDRESSES, PO_BOX]) spans.push(...regexSpans(text, pattern, 'addresses'));
    for (const m of text.matchAll(EUROPEAN_ADDRESS)) {
      if (m[1]!.length === 4 && LEXICON[m[2]!.toLowerCase()] !== undefined) continue;
      spans.push({ kind: 'addresses', start: m.index, end: m.index + m[0].length });
    }
  }
  if (kinds.has('phones')) spans.push(...phoneSpans(text), ...nationalPhoneSpans(text).map((s) => ({ kind: 'phones' as const, ...s })));
  if (kinds.has('names')) spans.push(...nameSpans(text), ...cuedNameSpans(text), ...shapedNameSpans(text));
  spans.push(...cuedPiiSpans(text, kinds));
  // Longest first at each start; a span overlapping one already kept is dropped, or joined to it
  // when both are of one kind ("Dr. <Given>" and "<Given> Ó <Surname>" are one name).
  // A span never starts or ends inside an escape the view blanked (the escape stays whole).
  for (const span of spans) {
    while (span.start < span.end && text[span.start] !== original[span.start]) span.start++;
    while (span.end > span.start && (text[span.end - 1] !== original[span.end - 1] || original[span.end - 1] === '\\')) span.end--;
  }
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: PiiSpan[] = [];
  let end = -1;
  for (const span of spans) {
    if (span.start < end) {
      const last = kept.at(-1)!;
      if (span.kind === last.kind && span.end > last.end) end = last.end = span.end;
      continue;
    }
    kept.push(span);
    end = span.end;
  }
  // A name found up to a particle runs on over it to the surname (<Given> van der <Surname>).
  for (const span of kept) {
    if (span.kind !== 'names') continue;
    const tail = NAME_TAIL.exec(text.slice(span.end, span.end + 60));
    if (tail !== null && !kept.some((o) => o !== span && o.start >= span.end && o.start < span.end + tail[0].length)) span.end += tail[0].length;
  }
  return kept;
}

/** Replaces personal data in the unlocked pieces with `<PERSON>`, `<PHONE>`, … (counted under `pii:<kind>`). */
export function redactPii(input: Piece[], counts: ClassCounts, kinds: ReadonlySet<PiiKind>): Piece[] {
  if (kinds.size === 0) return input;
  return input.flatMap((piece) => {
    if (piece.locked || piece.text.length === 0) return [piece];
    const spans = findPii(piece.text, kinds).map((span) => ({ ...span, text: PLACEHOLDER[span.kind], cls: `pii:${span.kind}` }));
    return spliceSpans(piece.text, 0, piece.text.length, spans, counts);
  });
}

/** Every kind of personal data in a text replaced (the redaction `redactResponses: true` applies to model answers). */
export function redactPiiText(text: string): string {
  const counts: ClassCounts = {};
  return joinPieces(redactPii([keep(text)], counts, new Set(PII_KINDS)));
}
