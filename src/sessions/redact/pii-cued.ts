import { createRequire } from 'node:module';
import nlp from 'compromise';
import type { PiiKind } from './pii-kinds.js';

/**
 * Personal data told by what stands around it rather than by its own shape (pii.ts calls these
 * beside its shape detectors; docs/hostile-input.md, "Eighth pass"):
 * - `@handles` where a sentence mentions someone (cc, thanks, ping, reviewers:, a request after
 *   it, a JSON `assignee` member) — never a decorator or doc tag, which no such cue precedes;
 * - phone numbers in any national form, bare digit runs included, after a word or a JSON member
 *   naming a phone (call, tel, mobile, WhatsApp, fax, "phone_number": …), and `+CC` numbers
 *   written with dots (+44.20.…);
 * - the cells of a CSV row under a header naming the column (name, phone, address, ssn, …);
 * - names in any script where only a person stands: a JSON or YAML member naming a person
 *   (contact, owner, assignee, …), `Name <mail@host>`, `git blame` and `git shortlog` lines, a chat
 *   quote `> Name:`, `user="Name"`; lower-case names after a cue (ask, owner=, customer);
 * - addresses after a word that says one follows (ship to, lives at, address:).
 */

export interface CuedSpan {
  kind: PiiKind;
  start: number;
  end: number;
}

export const LEXICON = (nlp.world() as { model: { one: { lexicon: Record<string, string> } } }).model.one.lexicon;
const NAME_TAGS = new Set(['FirstName', 'MaleName', 'FemaleName', 'LastName', 'Person']);
let ENGLISH: ReadonlySet<string> | undefined;
/** The word, in lower case, is in an English word list of ~275,000 words and their inflections (loaded on first use). */
export function englishWord(word: string): boolean {
  ENGLISH ??= new Set(createRequire(import.meta.url)('an-array-of-english-words') as string[]);
  return ENGLISH.has(word.toLowerCase());
}

/** Scripts without letter case (Han, kana, Hangul, Arabic, Hebrew, Devanagari, Thai, Georgian …): a capital cannot mark a name there. */
const CASELESS =
  /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Tamil}\p{Script=Thai}\p{Script=Georgian}\p{Script=Ethiopic}\p{M}]+$/u;

/** A word that may be part of a person's name: caseless script, or a capital (any cased script) and a word no English dictionary holds unless the tagger knows it as a name. */
function nameWord(word: string, lowerOk = false): boolean {
  if (CASELESS.test(word)) return true;
  if (!/^\p{L}[\p{L}\p{M}'’.-]*$/u.test(word) || word.length < 2) return false;
  if (!lowerOk && !/^\p{Lu}/u.test(word)) return false;
  const parts = word.split('-').filter((p) => p.length > 0);
  return parts.some((p) => {
    const known = LEXICON[p.toLowerCase()];
    return (known !== undefined && NAME_TAGS.has(known)) || (known === undefined && !englishWord(p));
  });
}

/** One to four words, each a name word; a particle (van, de, al) may stand between them. */
function personValue(value: string, lowerOk = false, minWords = 1): boolean {
  const words = value.trim().split(/\s+/u);
  if (words.length < minWords || words.length > 4 || value.length > 60 || /\d/u.test(value)) return false;
  const particle = /^(?:van|von|der|den|de|del|della|di|da|dos|du|le|la|bin|ibn|al|el|ter|ten|ben)$/u;
  const named = words.filter((w) => !particle.test(w));
  return named.length > 0 && named.every((w) => nameWord(w, lowerOk));
}

function push(out: CuedSpan[], kind: PiiKind, start: number, value: string): void {
  const trimmed = value.replace(/\s+$/u, '');
  if (trimmed.length > 0) out.push({ kind, start, end: start + trimmed.length });
}

// ---- @handles ----------------------------------------------------------------------------------

const HANDLE = /(?<![\p{L}\d_.@/\\-])@([A-Za-z0-9](?:[A-Za-z0-9._-]{0,37}[A-Za-z0-9])?)(?![\p{L}\d_@/-]|\.[A-Za-z0-9]|\()/gu;
const HANDLE_BEFORE =
  /(?:\b(?:cc|thanks|thank you|thx|ty|ping|pinged|reviewers?|assignees?|assigned to|blocked on|waiting (?:on|for)|owners?|by|with|hey|hi|hello|ask|tell|told|mention|dm|via|from)\b\s*[:,]?\s*|\/cc\s+|@[\w.-]+\s*,\s*|(?:"|\\")(?:assignee|reviewer|owner|author|user(?:name)?|handle|login|mention|creator|created_?by|requester|contact)s?(?:"|\\")\s*:\s*\[?\s*(?:"|\\"))$/iu;
const HANDLE_AFTER = /^[,:]?\s+(?:can|could|would|will|please|pls|ptal|do|did|should|what|any|thoughts|fyi|lgtm|thanks|is|are|has|any)\b/iu;

/** Doc-comment tags, decorators and CSS at-rules: an @ word that is not a person. */
const AT_KEYWORDS =
  /^(?:param|arg|argument|returns?|throws?|exception|example|see|since|type|typedef|template|override|internal|link|linkcode|default|defaultvalue|remarks|private|public|protected|readonly|abstract|async|callback|class|const|constant|constructor|enum|event|exports?|function|func|generator|global|ignore|implements|inheritdoc|interface|license|member|memberof|method|module|namespace|package|property|prop|requires|static|summary|this|todo|version|yields?|author|fires|listens|mixes|borrows|augments|extends|alias|lends|access|category|experimental|beta|alpha|sealed|virtual|deprecated|description|desc|file|fileoverview|overview|name|kind|inner|instance|variation|hideconstructor|async|media|import|keyframes|supports|layer|use|forward|include|mixin|extend|if|else|each|for|while|return|content|charset|page|container|font-face|apply|tailwind|types|ts-ignore|ts-expect-error|ts-nocheck|ts-check|jsx|flow|format|noflow|vitest-environment|jest-environment|echo|staticmethod|classmethod|dataclass|pytest|app|click|override|test|before|after|beforeeach|aftereach|get|post|put|delete|patch|input|output|component|injectable|directive|pipe|ngmodule|hostlistener|viewchild|latest|next|beta|canary)$/iu;

function handleSpans(text: string, out: CuedSpan[]): void {
  if (!text.includes('@')) return;
  for (const m of text.matchAll(HANDLE)) {
    const before = text.slice(Math.max(0, m.index - 40), m.index);
    const after = text.slice(m.index + m[0].length, m.index + m[0].length + 24);
    if (AT_KEYWORDS.test(m[1]!)) continue;
    if (HANDLE_BEFORE.test(before) || HANDLE_AFTER.test(after)) out.push({ kind: 'names', start: m.index + 1, end: m.index + m[0].length });
  }
}

// ---- phones ------------------------------------------------------------------------------------

const PHONE_CUE =
  /(?:\b(?:phone|tel|telephone|mobile|mob|cell|cellphone|call|ring|sms|text|whats ?app|signal|viber|fax|callback(?: requested)?|contact number|reach (?:me|us|him|her|them) (?:at|on)|handy|telefon|telefono|teléfono|téléphone|tél|portable|móvil|celular|telefone|contato|cellulare|mobil|mobiel|numer|номер|телефон|電話|携帯|手机|电话)\b\.?\s*(?:no\.?|number|nr\.?|#)?\s*[:=]?\s*(?:(?:on|at|to|from)\s+)?|tel:\s*|(?:"|\\")[\w-]*(?:phone|mobile|tel|fax|msisdn|cell)[\w-]*(?:"|\\")\s*:\s*(?:"|\\"))$/iu;
/** A run of digits and phone separators, an optional + first: seven to fifteen digits. */
const PHONE_RUN = /(?<![\w+.-])\+?\d[\d\s()./-]{5,22}\d(?![\w]|[.-]\d)/gu;
/** A number with its country code written with dots between the groups: +44.20.7946.0321. */
const DOTTED_INTERNATIONAL = /(?<![\w.+-])\+\d{1,3}(?:\.\d{1,5}){2,5}(?![\w.-]|\.\d)/gu;

function phoneSpansCued(text: string, out: CuedSpan[]): void {
  if (!/\d{2}/u.test(text)) return;
  for (const m of text.matchAll(PHONE_RUN)) {
    // Up to a line break (the run may not cross one, escaped or not).
    const raw = m[0].split(/\n|\\n/u)[0]!.trimEnd();
    const digits = raw.replace(/\D/gu, '').length;
    if (digits < 7 || digits > 15 || /^\d{4}-\d{2}-\d{2}/u.test(raw)) continue;
    if (PHONE_CUE.test(text.slice(Math.max(0, m.index - 40), m.index))) push(out, 'phones', m.index, raw);
  }
  for (const m of text.matchAll(DOTTED_INTERNATIONAL)) {
    const digits = m[0].replace(/\D/gu, '').length;
    if (digits >= 8 && digits <= 15) push(out, 'phones', m.index, m[0]);
  }
}

// ---- CSV columns -------------------------------------------------------------------------------

/** What a header cell says its column holds. */
function columnKind(header: string): PiiKind | 'name' | undefined {
  const h = header.trim().toLowerCase().replace(/^"|"$/gu, '');
  if (/phone|mobile|^tel|fax|^cell/u.test(h)) return 'phones';
  if (
    /^(?:(?:full|first|last|given|family|sur|display|contact|customer|employee|person|owner|author|user)[ _-]?)?name$|^(?:contact|customer|person|owner|author|assignee|employee|patient)$/u.test(
      h,
    )
  )
    return 'name';
  if (/address|street/u.test(h) && !/e-?mail|ip|mac/u.test(h)) return 'addresses';
  if (/^(?:ssn|nino|nir|dni|nie|cpf|pesel|bsn|tckn|aadhaar|pan|nric|sin|tfn|passport|national[ _-]?id|tax[ _-]?id|id[ _-]?(?:number|card))$/u.test(h))
    return 'ids';
  if (/^iban$/u.test(h)) return 'ibans';
  return undefined;
}

/** The cells of a CSV line with their offsets (a quoted cell may hold commas). */
function csvCells(line: string, base: number): Array<{ value: string; start: number }> {
  const cells: Array<{ value: string; start: number }> = [];
  const cell = /(?:\\?"((?:[^"\\]|\\[^"])*)\\?"|([^,]*))(?:,|$)/gu;
  for (let m = cell.exec(line); m !== null && m.index < line.length; m = cell.exec(line)) {
    const quoted = m[1] !== undefined;
    const value = quoted ? m[1]! : m[2]!;
    const offset = quoted ? m[0].indexOf(value, m[0].startsWith('\\') ? 2 : 1) : 0;
    cells.push({ value, start: base + m.index + offset });
    if (m[0].length === 0) cell.lastIndex++;
  }
  return cells;
}

function csvSpans(text: string, out: CuedSpan[]): void {
  if (!text.includes(',')) return;
  const lines: Array<{ line: string; start: number }> = [];
  let at = 0;
  // Odd parts are the line breaks, escaped or not.
  text.split(/(\r?\n|(?:\\+r)?\\+n)/u).forEach((part, index) => {
    if (index % 2 === 0) lines.push({ line: part, start: at });
    at += part.length;
  });
  for (let i = 0; i + 1 < lines.length; i++) {
    // The header may follow a quote on its line (a tool's output inside JSON: {"output":"id,name,…).
    const raw = lines[i]!.line;
    const header = raw.slice(raw.lastIndexOf('"') + 1).replace(/^[\s+>|-]*\d*\t?/u, '');
    if (!/^[A-Za-z_][\w ]*(?:,[A-Za-z_][\w ]*)+$/u.test(header.trim())) continue;
    const names = header.split(',');
    const kinds = names.map(columnKind);
    if (kinds.every((k) => k === undefined)) continue;
    for (let j = i + 1; j < lines.length; j++) {
      const { line, start } = lines[j]!;
      const lead = /^[\s+>|-]*(?:\d+\t)?/u.exec(line)![0].length;
      const cells = csvCells(line.slice(lead), start + lead);
      if (cells.length !== names.length) break;
      cells.forEach((c, k) => {
        const kind = kinds[k];
        const value = c.value.trim();
        if (kind === undefined || value.length === 0) return;
        const at = c.start + c.value.indexOf(value);
        if (kind === 'name') {
          if (personValue(value, true)) push(out, 'names', at, value);
        } else if (kind === 'phones' || kind === 'ids' || kind === 'ibans') {
          if ((value.match(/\d/gu)?.length ?? 0) >= 6) push(out, kind, at, value);
        } else if (/\d/u.test(value) && /\p{L}{2}/u.test(value)) push(out, kind, at, value);
      });
    }
  }
}

// ---- names -------------------------------------------------------------------------------------

const Q = String.raw`(?:"|\\+")`;
// Not a bare `name` or `user` (a tool's, a package's, an account's): CUED_NAME in pii.ts reads those when they hold a full name.
const PERSON_KEYS =
  '(?:contact|owner|assignee|reporter|reviewer|author|maintainer|created_?by|createdBy|updated_?by|updatedBy|customer|person|employee|manager|patient|holder|account_?holder|full_?name|fullName|display_?name|displayName|first_?name|firstName|last_?name|lastName|given_?name|givenName|family_?name|familyName|surname|nickname|contact_?name|contactName)';
/** The value of a JSON member naming a person. */
const JSON_PERSON = new RegExp(String.raw`${Q}${PERSON_KEYS}${Q}\s*:\s*${Q}([^"\\]{1,60})${Q}`, 'dgu');
/** A name member inside an object a person key holds: `"contact": {"name": "…"}`. */
const JSON_PERSON_NESTED = new RegExp(
  String.raw`${Q}${PERSON_KEYS}${Q}\s*:\s*\{\s*${Q}(?:name|full_?name|fullName|display_?name|displayName)${Q}\s*:\s*${Q}([^"\\]{1,60})${Q}`,
  'dgu',
);
/** A YAML / header line `key: value` naming a person. */
const YAML_PERSON = new RegExp(
  String.raw`(?:^|\n)[ \t]*(?:\d+\t)?[ \t]*\+?[ \t]*(?:-[ \t]+)?${PERSON_KEYS}s?[ \t]*:[ \t]+([^\n\\"'{}[\]<>:,]{1,60}?)[ \t]*(?=$|\n|<)`,
  'dgu',
);
/** A name before an e-mail in angle brackets (git, mail headers): any script. */
// (The e-mail may already be a placeholder, or a piece of its own after the e-mail pass: the text then ends at the bracket.)
const NAME_BEFORE_MAIL = /(?<=^|[\s:="'(>]|\\n|\\t)((?:[\p{L}\p{M}'’.-]+ ){0,3}[\p{L}\p{M}'’.-]+)\s*<(?:[^<>\s@"]+@[^<>\s"]+>|<EMAIL>>|$)/dgu;
/** `git blame`: a commit, an optional file name, then `(Name YYYY-MM-DD`. */
const GIT_BLAME = /(?:^|\n)[ \t]*(?:\d+\t)?[ \t]*\+?\^?[0-9a-f]{7,40}\s+(?:\S+\s+)?\(((?:[\p{L}\p{M}'’.-]+ ){0,3}[\p{L}\p{M}'’.-]+)\s+\d{4}-\d{2}-\d{2}/dgu;
/** `git shortlog -sn`: a count, a tab, a name alone on its line. */
const GIT_SHORTLOG = /(?:^|\n)[ \t]*(?:\d+\t[ \t]*)?\d+\t((?:[\p{L}\p{M}'’.-]+ ){0,3}[\p{L}\p{M}'’.-]+)[ \t]*(?=$|\n)/dgu;
/** A chat quote `> Name: …` or a trailer `Reviewed-by: Name` in any script. */
const SPEAKER =
  /(?:(?:^|\n)[ \t]*(?:\d+\t)?[ \t]*\+?[ \t]*>[ \t]*|\b(?:Author|Co-authored-by|Signed-off-by|Reviewed-by|Acked-by|Reported-by|Tested-by|Suggested-by|Approved-by|From|To|Cc)[ \t]*:[ \t]*)((?:[\p{L}\p{M}'’.-]+ ){0,3}[\p{L}\p{M}'’.-]+)(?=[ \t]*(?::|$|\n|\\n|<|,))/dgu;
/** `user="Name"`, `owner=name name` (a log field or an assignment naming a person). */
const KEY_EQUALS =
  /\b(?:user|owner|author|contact|customer|assignee|reviewer|holder)[ \t]*=[ \t]*(?:\\*")?((?:[\p{L}\p{M}'’-]+ ){0,2}[\p{L}\p{M}'’-]+)(?=\\*"|[ \t]*(?:$|\n|,|;))/dgu;
/** A lower-case word of a name: letters, an apostrophe or hyphen only inside. */
const LOWER_WORD = String.raw`\p{Ll}[\p{Ll}\p{M}'’-]*\p{Ll}`;
/** What ends a lower-case name after its cue: a word that goes on the sentence, or punctuation then a space or the end. */
const LOWER_END = String.raw`(?= (?:about|for|to|whether|if|has|had|is|was|wants|says|said)\b|[ \t]*(?:$|\n|[,.;:!?)](?=\s|$)))`;
/** A lower-case given name (and surname) after a verb addressing a person: "ask <given> about", "thanks <given>,". */
const LOWER_ADDRESSED = new RegExp(
  String.raw`(?<![\w-])(?:ask|asked|tell|told|ping|pinged|cc|thanks|thank you)[ \t]+(${LOWER_WORD}(?: ${LOWER_WORD}){0,2})${LOWER_END}`,
  'dgu',
);
/** Two or three lower-case name words after a noun naming a person: "customer <given> <surname> has". */
const LOWER_CUED = new RegExp(
  String.raw`\b(?:customer|client|patient|holder|owner|contact|reviewer|assignee)[ \t]*:?[ \t]+(${LOWER_WORD} ${LOWER_WORD}(?: ${LOWER_WORD})?)${LOWER_END}`,
  'dgu',
);
/** A comment opening with two lower-case words and a colon (`# <given> <surname>: …`): a note signed by a person. */
const COMMENT_SIGNED = /(?:^|\n)[ \t]*(?:\d+\t)?[ \t]*\+?[ \t]*(?:#|\/\/|--|;|\*)[ \t]*(\p{Ll}[\p{Ll}\p{M}'’-]{2,} \p{Ll}[\p{Ll}\p{M}'’-]{2,}):/dgu;
/** A comment opening with one lower-case word, a colon and a note's verb (`// <given>: keep until v3`): a note signed with a given name. */
const COMMENT_NOTE =
  /(?:^|\n)[ \t]*(?:\d+\t)?[ \t]*\+?(?:#|\/\/|--|;|\*)[ \t]*(\p{Ll}{3,}):[ \t]+(?=(?:keep|remove|fix|check|revisit|ask|see|why|not|needs?|leave|delete|drop|clean|update|handle|investigate|temporary|temp|hack|workaround|do not|don't|please|this|we)\b)/dgu;
/** In Cyrillic or Greek prose, a capitalised word between lower-case words of its script: a proper name ("спитай <Name> про", "ο <Name> έκανε"). */
const MID_SENTENCE_CAPITAL =
  /(?<=(?:^|[\s(])(?:(?=[\p{Script=Cyrillic}\p{Script=Greek}])\p{Ll})+[ \t]+)((?=[\p{Script=Cyrillic}\p{Script=Greek}])\p{Lu}(?:(?=[\p{Script=Cyrillic}\p{Script=Greek}])\p{Ll}){2,})(?=[ \t]+\p{Ll})/dgu;
/** A sign-off, then a line holding only a name (to the end of the quoted text it may close): "Best,\n<Given>", "Regards,\n<Given> <Surname>". */
const SIGN_OFF =
  /\b(?:Best|Regards|Kind regards|Best regards|Warm regards|Cheers|Thanks|Thank you|Sincerely|Yours|Ciao|Gruß|(?:Viele )?Grüße|Cordialement|Saludos|Pozdrawiam|Groeten|Hälsningar|Atenciosamente)[,!.]?[ \t]*\n[ \t]*(\p{Lu}\p{Ll}+(?:[ -]\p{Lu}\p{Ll}+){0,2})[ \t]*(?=$|\n|\\*['"`])/dgu;
/** A given name alone as a sentence's subject, before a verb a person does, or after words only a person follows. */
const HUMAN_VERBS =
  'said|says|wrote|asked|mentioned|thinks|thought|knows|knew|suggested|reported|approved|confirmed|agreed|noted|replied|commented|requested|reviewed|owns|prefers|wants|wanted|promised|deployed|rewrote|broke|merged|pushed|fixed|left|joined|shipped|added|removed|changed|updated|tested|found|needs|needed|told|decided|insisted|signed|and I|and me|is out|will (?:own|check|take|handle|review|look)';
const LONE_SUBJECT = new RegExp(
  String.raw`(?:(?:^|\n)[ \t]*(?:\d+\t)?[ \t]*\+?|[.!?;]\s+|\b(?:maybe|perhaps|ask|told|tell|for|with|and|from|to|by|that|because|unless|until|cc|ping)\s+)(\p{Lu}\p{Ll}{2,}(?:-\p{Ll}{2,})?(?: \p{Lu}\p{Ll}+(?:-\p{Lu}?\p{Ll}+)?){0,2})(?=\s+(?:${HUMAN_VERBS}) \p{L})`,
  'dgu',
);
/** A lower-case given name opening a line, before a verb a person does ("<given> deployed it"). */
const LOWER_SUBJECT = new RegExp(String.raw`(?:^|\n)[ \t]*(?:\d+\t)?[ \t]*\+?(\p{Ll}{3,}(?:-\p{Ll}{2,})?)(?=\s+(?:${HUMAN_VERBS}) \p{L})`, 'dgu');
const WAITING_FOR =
  /\b(?:waiting|wait|blocked|depends|rely|relying|leave it|hand it|handing it|give it|gave it)\s+(?:for|on|to)\s+(\p{Lu}\p{Ll}{2,}(?:-\p{Ll}{2,})?)(?=\s+to\b|[ \t]*(?:$|\n|[,.;:!?)]))/dgu;
/** A short run of a caseless script (a Han, kana or Hangul name, 2–4 characters) after a word only a person follows, in Latin-script prose. */
const CASELESS_AFTER_CUE =
  /\b(?:with|by|ask|asked|told|tell|cc|ping|thanks|thank you|hi|hey|dear)[ \t]+([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]{2,4})(?![\p{L}])/dgu;
const TOOLS =
  /^(?:const|let|var|return|await|yield|self|then|else|case|git|npm|pnpm|yarn|node|bun|deno|docker|kubectl|helm|make|cargo|pip|uv|poetry|go|rustc|tsc|vite|vitest|jest|eslint|biome|prettier|webpack|rollup|esbuild|terraform|ansible|redis|postgres|mysql|nginx|systemd|cron|ci|it|he|she|they|we|you|who|this|that|which|there|here|everyone|someone|nobody)$/iu;

function nameSpansCued(text: string, out: CuedSpan[]): void {
  const take = (pattern: RegExp, accept: (value: string) => boolean) => {
    for (const m of text.matchAll(pattern)) {
      const value = m[1]!;
      if (accept(value)) push(out, 'names', m.indices![1]![0], value);
    }
  };
  take(JSON_PERSON, (v) => personValue(v));
  take(JSON_PERSON_NESTED, (v) => personValue(v));
  take(YAML_PERSON, (v) => personValue(v));
  take(NAME_BEFORE_MAIL, (v) => personValue(v));
  take(GIT_BLAME, (v) => personValue(v, true));
  take(GIT_SHORTLOG, (v) => personValue(v) && !/bot$/iu.test(v));
  take(SPEAKER, (v) => personValue(v));
  take(KEY_EQUALS, (v) => personValue(v, true) && !TOOLS.test(v));
  for (const pattern of [LOWER_ADDRESSED, LOWER_CUED]) take(pattern, (v) => personValue(v, true) && !v.split(' ').some((w) => TOOLS.test(w)));
  take(COMMENT_SIGNED, (v) => personValue(v, true, 2) && !v.split(' ').some((w) => TOOLS.test(w)));
  // The first word names the person; a surname after it may be an English word (Kang, Park, Baker).
  take(LONE_SUBJECT, (v) => {
    const [first, ...rest] = v.split(' ');
    return !TOOLS.test(first!) && personValue(first!, true) && !demonymOrPlace(first!) && rest.every((w) => /^\p{Lu}/u.test(w));
  });
  take(LOWER_SUBJECT, (v) => !TOOLS.test(v) && personValue(v, true));
  take(WAITING_FOR, (v) => personValue(v) && !demonymOrPlace(v));
  take(CASELESS_AFTER_CUE, () => true);
  take(COMMENT_NOTE, (v) => personValue(v, true) && !TOOLS.test(v));
  take(MID_SENTENCE_CAPITAL, () => true);
  take(SIGN_OFF, (v) => personValue(v) && !demonymOrPlace(v.split(/[ -]/u)[0]!));
}

/** The tagger reads the word as a people's or a place's name (Indian, Brazilian, Texas): not a person. */
export function demonymOrPlace(word: string): boolean {
  const tags = (nlp(word).json() as Array<{ terms: Array<{ tags: string[] }> }>)[0]?.terms[0]?.tags ?? [];
  return tags.some((t) => t === 'Demonym' || t === 'Place' || t === 'Country' || t === 'City' || t === 'Region' || t === 'Organization');
}

// ---- addresses ---------------------------------------------------------------------------------

/** After a word saying an address follows, the rest of the phrase when it holds a number and a capitalised word. */
const ADDRESS_CUE =
  /(?:\b(?:ship(?:ped|ping)? to|deliver(?:ed|y)?(?: [\p{L}-]+){0,3} to|lives at|living at|resides at)\b[ \t]*:?[ \t]*|\b(?:[\w-]*address|lieferadresse|anschrift|adresse|dirección|direccion|indirizzo|endereço|адрес)(?:\\*")?[ \t]*[:=][ \t]*(?:\\*")?|<address>)([^\n"<>{}|]{6,120}?)(?=[ \t]*(?:$|\n|\\?"|<|[.;](?:\s|$)| now\b| last\b| please\b))/dgiu;
/** A street type (English or another language's word) then a house number, European order: "<Name> Street 12B", "Am <Square> 7a". */
const STREET_THEN_NUMBER =
  /(?<![\p{L}\d])(?:(?:\p{Lu}\p{Ll}+ ){1,2}(?:Street|Road|Lane|Avenue|Drive|Place|Square|Gardens|Terrace|Close|Crescent|Row|Walk)|(?:Am|An der|Auf dem|Im|Zum|Zur|In der) \p{Lu}[\p{Ll}ß]+) \d{1,4}[A-Za-z]?(?![\p{L}\d])/gu;
/** Street and number, a comma, then a postcode of forms the five-digit pattern does not take (111 43, 120 00, 4050-262, 1015 CJ) and a town. */
const OTHER_POSTCODES =
  /(?<![\p{L}\d])(?:(?:\p{Lu}[\p{Ll}ß]+|das|dos|da|de|do) ){0,3}\p{Lu}[\p{Ll}\p{M}ßąćęłńóśźżíáéúůýčřšžě]+ \d{1,4}[a-zA-Z]?,\s*(?:\d{3} \d{2}|\d{4}-\d{3}|\d{4})\s+\p{Lu}[\p{Ll}\p{M}öäüåæøé]+(?: \d{1,2})?/gu;
/** A Japanese address: the postal mark and code, or a prefecture, a ward or city, and block numbers (1-2-3). */
const JP_ADDRESS =
  /〒\s?\d{3}-\d{4}[^\n"<>,]{0,40}|[\p{Script=Han}]{1,4}[都道府県][\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]{1,12}?[区市町村郡][\p{Script=Han}\p{Script=Katakana}]{0,10}\d{1,4}(?:[-－丁目番地号]\d{1,4}){1,3}/gu;
/** A romanised Japanese address: block numbers, a district, a ward or city (-ku, -shi), a town, the postcode. */
const JP_ROMAN = /\b\d{1,2}-\d{1,2}(?:-\d{1,3})?\s+\p{Lu}[\p{L}-]+,\s*\p{Lu}[\p{L}]+-(?:ku|shi|cho|machi|gun),\s*\p{Lu}\p{L}+(?:\s\d{3}-\d{4})?/gu;
/** A Russian-style address: ул./пр. street, д. house, optional кв. flat, town and six-digit index. */
const CYRILLIC_ADDRESS =
  /(?:ул|пр|просп|пер|наб|ш|пл|бул)\.\s*\p{Lu}[\p{L}-]+(?:\s\p{L}+)?,\s*д\.\s*\d+[\p{L}\d/]*(?:,\s*(?:кв|корп|стр|к)\.\s*\d+)*(?:,\s*\p{Lu}[\p{L}-]+)?(?:,\s*\d{6})?/gu;
/** Street first with an abbreviation (Av., Avda.), more parts after it (Col. …), then a postcode and a town. */
const STREET_FIRST_PARTS =
  /\b(?:Av|Avda|Avenida|Calle|Rua|R|Blvd|Calz)\.?\s(?:\p{Lu}[\p{L}.]*\s){1,4}\d{1,5}(?:,\s*[^,\n"<>]{2,40}){0,3},\s*\d{5}(?:-\d{3})?\s+\p{Lu}[\p{L}]+(?:\s(?:de\s)?\p{Lu}[\p{L}]+){0,3}/gu;
/** An Indian address: a flat or house, building, street (Road, Marg, Nagar), town and six-digit PIN. */
const IN_ADDRESS =
  /\b(?:(?:Flat|House|Plot|Door|H\.?\s?No\.?)\s[\w/-]+,\s*)?(?:[^,\n"<>]{2,40},\s*)?\d{1,5}\s(?:\p{Lu}[\p{L}.]*\s){1,3}(?:Road|Marg|Nagar|Street|Lane|Main|Cross),\s*\p{Lu}\p{Ll}+\s?[1-9]\d{2}\s?\d{3}\b/gu;

function addressSpansCued(text: string, out: CuedSpan[]): void {
  if (!/\d/u.test(text)) return;
  for (const m of text.matchAll(ADDRESS_CUE)) {
    const value = m[1]!.trim();
    // A number and a capitalised word (a street and house number), a comma or a postcode making it more than a phrase.
    if (/\d/u.test(value) && /\p{Lu}\p{Ll}{2,}|[\p{Script=Han}]{2}/u.test(value) && (/,/u.test(value) || /\d{4,}/u.test(value) || STREET_WORD.test(value)))
      push(out, 'addresses', m.indices![1]![0] + m[1]!.indexOf(value), value);
  }
  for (const pattern of [STREET_THEN_NUMBER, OTHER_POSTCODES, JP_ADDRESS, JP_ROMAN, CYRILLIC_ADDRESS, STREET_FIRST_PARTS, IN_ADDRESS]) {
    for (const m of text.matchAll(pattern)) push(out, 'addresses', m.index, m[0]);
  }
}
const STREET_WORD =
  /\b(?:Street|St|Road|Rd|Avenue|Ave|Lane|Drive|Way|Straße|Strasse|str|gasse|weg|gatan|gata|gade|vej|gracht|straat|laan|rue|via|calle|rua|ul|Flat|Apt|Suite|Unit)\b/iu;

/**
 * The text as the detectors read it, of the same length so offsets hold: a JSON escape of a line
 * break (`\\n`, `\\\\n` in JSON inside JSON) read as a line break, of a tab as spaces (the escape's
 * letter would otherwise join the next word: `\\nthanks`). Patterns that need a line's start allow
 * the prefixes tools add before it (LINE_START).
 */
export function escapeView(text: string): string {
  if (!text.includes('\\')) return text;
  return text.replace(/\\+[nr]/gu, (m) => `${' '.repeat(m.length - 1)}\n`).replace(/\\+t/gu, (m) => `${' '.repeat(m.length - 1)}\t`);
}

/** The spans of the cued kinds asked for. */
export function cuedPiiSpans(original: string, kinds: ReadonlySet<PiiKind>): CuedSpan[] {
  const out: CuedSpan[] = [];
  const text = escapeView(original);
  if (kinds.has('names')) {
    handleSpans(text, out);
    nameSpansCued(text, out);
  }
  if (kinds.has('phones')) phoneSpansCued(text, out);
  if (kinds.has('addresses')) addressSpansCued(text, out);
  csvSpans(text, out);
  return out.filter((s) => kinds.has(s.kind));
}
