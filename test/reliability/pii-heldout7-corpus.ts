/**
 * A seventh held-out corpus of personal data (issue #40), written and committed before its first
 * run and before the detector code of its pass was read; its first figure is the held-out one
 * (docs/hostile-input.md). Unlike the sixth (hand-written items) it is drawn from pools by a
 * seed, so the same code yields other names, digits and forms under another seed, and it aims at
 * what the earlier sets had little of: names of many nationalities and scripts (Cyrillic, Greek,
 * Han, kana, Hangul, Devanagari, Hebrew, Arabic, Thai, Armenian, Georgian), given names alone
 * with no cue word, lower-case names, names in code comments, `git blame` / `git shortlog` /
 * `Author:` lines, CSV rows and JSON `contact` fields; lower-case `@handles`; phone numbers of
 * twenty-odd countries in national and `+CC` forms with dots, spaces and dashes, and bare
 * ten-digit North American numbers; addresses in European order (street, then number) as well
 * as US, UK, French, Japanese, Latin American and Cyrillic ones; IPv6 in every compression, with
 * zone ids, ports, prefixes and embedded IPv4; Luhn-valid cards of eight networks; IBANs of
 * twenty countries (mod 97 and, where a country has one, its national check, checked by
 * ibantools); national ids of sixteen countries with their check digits; e-mail addresses with
 * unusual TLDs, sub-domains and plus-addressing.
 *
 * Items sit in fifteen places of Claude Code and Codex rollouts (user text, tool-call arguments,
 * tool results, assistant text; pii-heldout7-place.ts). No text carries an item twice, and no
 * text of an item carries another item's kind of data except where noted (a git `Author:` line
 * has its e-mail).
 */
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import type { HeldOutItem } from './pii-heldout-corpus.js';
import { placeText } from './pii-heldout7-place.js';

export const HELD_OUT7_SEED = 16_180_339;

type R = () => number;
type Entry = { item: HeldOutItem; text: string };

const pick = <T>(r: R, list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;
const int = (r: R, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
const digits = (r: R, n: number) => Array.from({ length: n }, () => Math.floor(r() * 10)).join('');
const nz = (r: R, n: number) => `${int(r, 1, 9)}${digits(r, n - 1)}`;
const two = (n: number) => String(n).padStart(2, '0');
const fill = (template: string, values: Record<string, string>) => template.replace(/\{(\w+)\}/gu, (_, k: string) => values[k] ?? `{${k}}`);

// ---- names -------------------------------------------------------------------------------------

/** [given, surname, ascii e-mail stem] of many nationalities, Latin script. */
const LATIN_PEOPLE: ReadonlyArray<readonly [string, string]> = [
  ['Svetlana', 'Volkova'],
  ['Bongani', 'Khumalo'],
  ['Ayelet', 'Mizrahi'],
  ['Tenzin', 'Wangchuk'],
  ['Eun-ji', 'Hwang'],
  ['Nkechi', 'Eze'],
  ['Dagny', 'Haugland'],
  ['Ilse', 'Vogt'],
  ['Faisal', 'Al-Mansouri'],
  ['Rukmini', 'Raghunathan'],
  ['Ximena', 'Quispe'],
  ['Ngaio', 'Tipene'],
  ['Olufemi', 'Adebayo'],
  ['Eirik', 'Lunde'],
  ['Zofia', 'Wróblewska'],
  ['Bartosz', 'Zieliński'],
  ['Ioana', 'Popescu'],
  ['Thabo', 'Mthembu'],
  ['Lerato', 'Ndlovu'],
  ['Itzel', 'Villanueva'],
  ['Gwenaëlle', 'Lemaire'],
  ['Niamh', 'Gallagher'],
  ['Tuomas', 'Virtanen'],
  ['Kristjan', 'Tamm'],
  ['Gintaras', 'Kazlauskas'],
  ['Nodira', 'Yusupova'],
  ['Aigerim', 'Abenova'],
  ['Phuong', 'Tran'],
  ['Dewi', 'Santoso'],
  ['Haruto', 'Takahashi'],
  ['Jae-won', 'Kang'],
  ['Kavya', 'Menon'],
  ['Yara', 'Farouk'],
  ['Parisa', 'Tehrani'],
  ['Emeka', 'Nwachukwu'],
  ['Anahí', 'Mamani'],
  ['Benedikt', 'Schreiber'],
  ['Quentin', 'Fabre'],
  ['Rūta', 'Petrauskienė'],
  ['Wiremu', 'Parata'],
  ['Kalani', 'Akana'],
  ['Darius', 'Moradi'],
  ['Chiamaka', 'Obi'],
  ['Radu', 'Ionescu'],
  ['Mahliyo', 'Karimova'],
];

/** Full names in other scripts (a Han, kana or Hangul name is one word). */
const SCRIPT_NAMES = [
  'Светлана Кузнецова',
  'Дмитро Шевченко',
  'Νίκος Παπαδάκης',
  'Αλέξανδρος Γεωργίου',
  '王秀英',
  '李建华',
  '山田花子',
  '佐藤健一',
  '김지훈',
  '박서연',
  'प्रिया शर्मा',
  'דוד מזרחי',
  'محمد العلي',
  'ณัฐพล ศรีสุข',
  'Արամ Պետրոսյան',
  'ნინო ბერიძე',
];

/** Templates for a full name {n} (lower case {nl} where the form is lower case); {e} an e-mail stem, {k} a row number, {h} a commit. */
const FULL_NAME_TEXTS = [
  'Author: {n} <{e}@users.noreply.example.com>\nDate:   Thu Oct 2 14:03:11 2025 +0200\n\n    tighten retry budget',
  '{h} ({n} 2024-03-02 10:11:12 +0100 42)     return total;',
  '    17\t{n}\n     9\tbuild-bot',
  'id,full_name,role\n{k},{n},admin',
  '{"id": {k}, "contact": "{n}", "priority": "high"}',
  '{"contact":{"name":"{n}","role":"billing"}}',
  '// {n} wrote this parser, ask before changing the grammar',
  '/* reviewed by {n} */',
  '> {n}: can we ship this today?',
  'INFO user="{n}" signed in from the mobile app',
  '{n} deployed it to prod on Friday',
  'I paired with {n} on the cache fix',
  'maintainers:\n  - name: {n}\n    since: 2021',
  '| {k} | {n} | Support | Lisbon |',
  'Reviewed-by: {n}',
  'git commit --author="{n} <{e}@example.org>" -m "fix rounding"',
  'owner={nl}',
  'ask {nl} about the billing export',
  '# {nl}: keep this shim until v3',
  'fixture: customer {nl} has two overdue invoices',
];

/** Templates for a given name {g} alone, no greeting or @: in a sentence, a comment, a field. */
const GIVEN_TEXTS = [
  '{g} deployed it last night',
  '{g} says the cache is stale again',
  'told {g} the build is green',
  'waiting for {g} to merge the branch',
  '{g} and I rewrote the importer',
  'not sure, maybe {g} knows why the cron job stopped',
  '# {g} wants this behind a flag',
  '{"contact": "{g}", "channel": "email"}',
  'assigned to {g}',
  '{gl} deployed it',
  '// {gl}: keep until v3',
  'ask {gl} for the staging password',
];

const SCRIPT_GIVEN: ReadonlyArray<readonly [string, string]> = [
  ['Светлана', 'Светлана говорит, что сборка снова зелёная'],
  ['Дмитро', 'спитай Дмитро про міграцію'],
  ['Νίκος', 'ο Νίκος έκανε deploy χθες'],
  ['Ayşe', 'Ayşe dün gece deploy etti'],
  ['Małgorzata', 'Małgorzata poprawiła test wczoraj'],
];

function commitHash(r: R): string {
  return Array.from({ length: 8 }, () => '0123456789abcdef'[int(r, 0, 15)]).join('');
}

function stem(given: string, surname: string): string {
  const ascii = (s: string) =>
    s
      .normalize('NFD')
      .replace(/[^A-Za-z]/gu, '')
      .toLowerCase();
  return `${ascii(given)}.${ascii(surname)}`;
}

function fullNames(r: R, count: number): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const template = FULL_NAME_TEXTS[i % FULL_NAME_TEXTS.length] as string;
    const lower = template.includes('{nl}');
    const script = !lower && i % 3 === 2;
    let value: string;
    let e = 'dev';
    if (script) value = SCRIPT_NAMES[(i * 5) % SCRIPT_NAMES.length] as string;
    else {
      const [g, s] = LATIN_PEOPLE[(i * 7) % LATIN_PEOPLE.length] as readonly [string, string];
      value = lower ? `${g} ${s}`.toLowerCase() : `${g} ${s}`;
      e = stem(g, s);
    }
    out.push({
      item: { kind: 'name', value },
      text: fill(template, { n: value, nl: value, e, k: String(int(r, 2, 980)), h: commitHash(r) }),
    });
  }
  return out;
}

function givenNames(r: R, count: number): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    if (i % 6 === 5) {
      const [g, text] = SCRIPT_GIVEN[Math.floor(i / 6) % SCRIPT_GIVEN.length] as readonly [string, string];
      out.push({ item: { kind: 'givenName', value: g }, text });
      continue;
    }
    const [g] = LATIN_PEOPLE[(i * 11 + 3) % LATIN_PEOPLE.length] as readonly [string, string];
    const template = pick(r, GIVEN_TEXTS);
    const lower = template.includes('{gl}');
    const value = lower ? g.toLowerCase() : g;
    out.push({ item: { kind: 'givenName', value }, text: fill(template, { g: value, gl: value }) });
  }
  return out;
}

// ---- handles -----------------------------------------------------------------------------------

const HANDLE_TEXTS = [
  'cc @{h}',
  'thanks @{h} for the quick review',
  '@{h} can you take a look at the failing job?',
  'reviewers: @{h}',
  'ping @{h} before merging',
  '/cc @{h} (owner of the billing module)',
  '{"assignee": "@{h}", "labels": ["bug"]}',
  'blocked on @{h}',
];

function handles(r: R, count: number): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const [g, s] = LATIN_PEOPLE[(i * 13 + 5) % LATIN_PEOPLE.length] as readonly [string, string];
    const [a, b] = stem(g, s).split('.') as [string, string];
    const h = pick(r, [`${a}.${b.slice(0, 1)}`, `${a.slice(0, 1)}${b}`, `${a}-${b}`, `${a}_${int(r, 10, 99)}`, a, `${a}${b.slice(0, 2)}`]);
    out.push({ item: { kind: 'handle', value: `@${h}` }, text: fill(HANDLE_TEXTS[i % HANDLE_TEXTS.length] as string, { h }) });
  }
  return out;
}

// ---- phones ------------------------------------------------------------------------------------

/** North American number parts: area and exchange codes start 2–9. */
const nanp = (r: R) => [`${int(r, 2, 9)}${digits(r, 2)}`, `${int(r, 2, 9)}${digits(r, 2)}`, digits(r, 4)] as const;

const PHONE_FORMS: ReadonlyArray<(r: R) => string> = [
  (r) => nanp(r).join(''),
  (r) => nanp(r).join(''),
  (r) => `+1.${nanp(r).join('.')}`,
  (r) => `+1 ${nanp(r).join(' ')}`,
  (r) => {
    const [a, b, c] = nanp(r);
    return `(${a})${b}-${c}`;
  },
  (r) => `+44 7${digits(r, 3)} ${digits(r, 6)}`,
  (r) => `07${digits(r, 3)} ${digits(r, 3)} ${digits(r, 3)}`,
  (r) => `+44.20.${int(r, 7, 8)}${digits(r, 3)}.${digits(r, 4)}`,
  (r) => `0049 17${int(r, 0, 9)} ${digits(r, 7)}`,
  (r) => `030/${nz(r, 7)}`,
  (r) => `+49-(0)${pick(r, ['30', '40', '89', '69'])}-${digits(r, 4)}-${digits(r, 4)}`,
  (r) => `017${int(r, 0, 9)}-${digits(r, 7)}`,
  (r) => `+33.${int(r, 6, 7)}.${two(int(r, 10, 99))}.${two(int(r, 10, 99))}.${two(int(r, 10, 99))}.${two(int(r, 10, 99))}`,
  (r) => `06.${two(int(r, 10, 99))}.${two(int(r, 10, 99))}.${two(int(r, 10, 99))}.${two(int(r, 10, 99))}`,
  (r) => `0033 1 ${digits(r, 2)} ${digits(r, 2)} ${digits(r, 2)} ${digits(r, 2)}`,
  (r) => `+34 91 ${digits(r, 3)} ${digits(r, 2)} ${digits(r, 2)}`,
  (r) => `6${digits(r, 2)} ${digits(r, 2)} ${digits(r, 2)} ${digits(r, 2)}`,
  (r) => `+39 3${digits(r, 2)} ${digits(r, 3)} ${digits(r, 4)}`,
  (r) => `06-${nz(r, 8)}`,
  (r) => `+31 (0)20 ${digits(r, 3)} ${digits(r, 4)}`,
  (r) => `+48 5${digits(r, 2)} ${digits(r, 3)} ${digits(r, 3)}`,
  (r) => `+7 (495) ${digits(r, 3)}-${digits(r, 2)}-${digits(r, 2)}`,
  (r) => `8 (9${digits(r, 2)}) ${digits(r, 3)}-${digits(r, 2)}-${digits(r, 2)}`,
  (r) => `+86 13${int(r, 0, 9)} ${digits(r, 4)} ${digits(r, 4)}`,
  (r) => `1${pick(r, ['38', '39', '50', '86'])}${digits(r, 8)}`,
  (r) => `+91.9${digits(r, 4)}.${digits(r, 5)}`,
  (r) => `0${int(r, 7, 9)}${digits(r, 9)}`,
  (r) => `090-${digits(r, 4)}-${digits(r, 4)}`,
  (r) => `03(${digits(r, 4)})${digits(r, 4)}`,
  (r) => `010-${digits(r, 4)}-${digits(r, 4)}`,
  (r) => `+82 10 ${digits(r, 4)} ${digits(r, 4)}`,
  (r) => `+55 11 9${digits(r, 4)}-${digits(r, 4)}`,
  (r) => `+52 55 ${digits(r, 4)} ${digits(r, 4)}`,
  (r) => `04${digits(r, 2)} ${digits(r, 3)} ${digits(r, 3)}`,
  (r) => `+27.82.${digits(r, 3)}.${digits(r, 4)}`,
  (r) => `+234 80${int(r, 2, 9)} ${digits(r, 3)} ${digits(r, 4)}`,
  (r) => `0532 ${digits(r, 3)} ${digits(r, 2)} ${digits(r, 2)}`,
  (r) => `+972-5${int(r, 0, 8)}-${digits(r, 3)}-${digits(r, 4)}`,
  (r) => `+65 9${digits(r, 3)} ${digits(r, 4)}`,
  (r) => `+971 5${int(r, 0, 8)} ${digits(r, 3)} ${digits(r, 4)}`,
  (r) => `+41 79 ${digits(r, 3)} ${digits(r, 2)} ${digits(r, 2)}`,
  (r) => `070-${digits(r, 3)} ${digits(r, 2)} ${digits(r, 2)}`,
  (r) => `+47 9${digits(r, 2)} ${digits(r, 2)} ${digits(r, 3)}`,
  (r) => `tel:+4930${nz(r, 7)}`,
];

const PHONE_TEXTS = [
  'call {p}',
  'phone: {p}',
  '"mobile": "{p}"',
  'tel={p}',
  'id,phone,city\n{k},{p},Lyon',
  'WhatsApp {p}',
  'reach me at {p} after six',
  'Contact number {p} (evenings)',
  'sms to {p} failed: carrier rejected',
  'callback requested on {p}',
  '<a href="tel:{p}">call the desk</a>',
  'fax {p}',
  '"phone_number":"{p}"',
];

function phones(r: R, count: number): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const value = (PHONE_FORMS[i % PHONE_FORMS.length] as (r: R) => string)(r);
    const template = value.startsWith('tel:') ? 'click {p} to ring the office' : pick(r, PHONE_TEXTS);
    out.push({ item: { kind: 'phone', value }, text: fill(template, { p: value, k: String(int(r, 2, 400)) }) });
  }
  return out;
}

// ---- addresses ---------------------------------------------------------------------------------

const ADDRESS_FORMS: ReadonlyArray<(r: R) => string> = [
  (r) => `Baker Street ${int(r, 2, 250)}${pick(r, ['B', 'A', ''])}`,
  (r) => `Baker Street ${int(r, 2, 250)}B, London NW1 6XE`,
  (r) =>
    `${pick(r, ['Hauptstraße', 'Lindenstraße', 'Bergstraße', 'Schulweg'])} ${int(r, 1, 120)}, ${pick(r, ['10115 Berlin', '50667 Köln', '01067 Dresden', '28195 Bremen'])}`,
  (r) => `${pick(r, ['Hauptstr.', 'Gartenstr.', 'Am Markt'])} ${int(r, 1, 60)}${pick(r, ['', 'a'])}`,
  (r) => `${pick(r, ['Kungsgatan', 'Drottninggatan', 'Sveavägen'])} ${int(r, 1, 90)}, ${pick(r, ['111 43 Stockholm', '411 19 Göteborg'])}`,
  (r) => `${pick(r, ['Storgata', 'Karl Johans gate'])} ${int(r, 1, 60)}, ${pick(r, ['0159 Oslo', '5003 Bergen'])}`,
  (r) => `${pick(r, ['Nørrebrogade', 'Vesterbrogade'])} ${int(r, 1, 200)}, ${pick(r, ['2200 København N', '1620 København V'])}`,
  (r) => `${pick(r, ['Keizersgracht', 'Herengracht', 'Oudegracht'])} ${int(r, 1, 600)}, ${pick(r, ['1015 CJ Amsterdam', '3511 AB Utrecht'])}`,
  (r) => `${pick(r, ['Bahnhofstrasse', 'Seefeldstrasse'])} ${int(r, 1, 99)}, ${pick(r, ['8001 Zürich', '3011 Bern'])}`,
  (r) => `${pick(r, ['Via Garibaldi', 'Via Roma', 'Corso Buenos Aires'])} ${int(r, 1, 150)}, ${pick(r, ['20121 Milano', '10122 Torino'])}`,
  (r) =>
    `${pick(r, ['Calle de Alcalá', 'Carrer de Mallorca', 'Calle Sierpes'])} ${int(r, 1, 300)}, ${pick(r, ['28014 Madrid', '08008 Barcelona', '41004 Sevilla'])}`,
  (r) => `ul. ${pick(r, ['Marszałkowska', 'Piotrkowska', 'Długa'])} ${int(r, 1, 140)}/${int(r, 1, 40)}, ${pick(r, ['00-514 Warszawa', '90-001 Łódź'])}`,
  (r) => `Rua ${pick(r, ['Augusta', 'do Ouro', 'das Flores'])} ${int(r, 1, 250)}, ${pick(r, ['1100-053 Lisboa', '4050-262 Porto'])}`,
  (r) => `${pick(r, ['Vinohradská', 'Národní'])} ${int(r, 1, 180)}, 120 00 Praha 2`,
  (r) => `Mannerheimintie ${int(r, 1, 90)} B ${int(r, 1, 30)}, 00100 Helsinki`,
  (r) => `Rue ${pick(r, ['Neuve', 'de la Loi', 'Haute'])} ${int(r, 1, 200)}, 1000 Bruxelles`,
  (r) =>
    `${int(r, 100, 9899)} ${pick(r, ['W Olive Ave', 'N Halsted St', 'SE Hawthorne Blvd'])} #${int(r, 100, 499)}, ${pick(r, ['Glendale, AZ 85302', 'Chicago, IL 60614', 'Portland, OR 97214'])}`,
  (r) =>
    `${int(r, 10, 999)} ${pick(r, ['Evergreen Terrace', 'Sycamore Lane', 'Cottonwood Drive'])}, ${pick(r, ['Springfield, IL 62704', 'Boulder, CO 80302'])}`,
  (r) => `${int(r, 1, 99)} ${pick(r, ['Elm St', 'Pine Rd'])} Apt ${int(r, 1, 20)}${pick(r, ['A', 'C'])}`,
  (r) =>
    `Flat ${int(r, 1, 12)}, ${int(r, 2, 80)} ${pick(r, ['Albion Road', 'Kingsway', 'Mill Hill'])}, ${pick(r, ['Leeds LS6 1AA', 'Cardiff CF10 3FD', 'Derby DE1 2QQ'])}`,
  (r) => `${int(r, 2, 150)} ${pick(r, ['High Street', 'Queens Road'])}, ${pick(r, ['Oxford OX1 4AU', 'Bath BA1 1LT'])}`,
  (r) => `${int(r, 1, 80)} rue du ${pick(r, ['Faubourg Saint-Antoine', 'Général Leclerc'])}, ${pick(r, ['75011 Paris', '59000 Lille'])}`,
  (r) => `${int(r, 1, 40)}, allée des ${pick(r, ['Tilleuls', 'Acacias'])}, ${pick(r, ['44000 Nantes', '31000 Toulouse'])}`,
  (r) => `〒${digits(r, 3)}-${digits(r, 4)} 東京都${pick(r, ['渋谷区渋谷', '港区六本木', '新宿区西新宿'])}${int(r, 1, 6)}-${int(r, 1, 30)}-${int(r, 1, 20)}`,
  (r) =>
    `${int(r, 1, 6)}-${int(r, 1, 20)}-${int(r, 1, 15)} ${pick(r, ['Marunouchi, Chiyoda-ku', 'Roppongi, Minato-ku'])}, Tokyo ${digits(r, 3)}-${digits(r, 4)}`,
  (r) => `Av. Paulista, ${int(r, 100, 2500)} - Bela Vista, São Paulo - SP, 01310-${digits(r, 3)}`,
  (r) => `Av. Insurgentes Sur ${int(r, 100, 3000)}, Col. Del Valle, 03100 Ciudad de México`,
  (r) => `ул. ${pick(r, ['Тверская', 'Арбат'])}, д. ${int(r, 1, 40)}, кв. ${int(r, 1, 120)}, Москва, 125009`,
  (r) => `${int(r, 1, 900)} Rue Sainte-Catherine O, Montréal, QC H3B 1A7`,
  (r) => `Unit ${int(r, 1, 12)}, ${int(r, 2, 90)} ${pick(r, ['Smith St', 'Brunswick St'])}, Fitzroy VIC 3065`,
  (r) => `Flat ${int(r, 101, 804)}, Sai Residency, ${int(r, 1, 40)} MG Road, Bengaluru 560001`,
];

const ADDRESS_TEXTS = [
  'ship to {a}',
  '"address": "{a}"',
  'id,address\n{k},"{a}"',
  'moved to {a} last month',
  'billing_address: {a}',
  'The office is at {a}.',
  'Lieferadresse: {a}',
  'she lives at {a} now',
  'deliver the replacement router to {a}',
  '<address>{a}</address>',
];

function addresses(r: R, count: number): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const value = (ADDRESS_FORMS[i % ADDRESS_FORMS.length] as (r: R) => string)(r);
    out.push({ item: { kind: 'address', value }, text: fill(pick(r, ADDRESS_TEXTS), { a: value, k: String(int(r, 2, 400)) }) });
  }
  return out;
}

// ---- IPv6 --------------------------------------------------------------------------------------

const hex = (r: R, lo = 1) => int(r, lo, 0xffff).toString(16);
const PREFIXES = ['2a01:4f8', '2a02:6b8', '2604:a880', '2406:da18', '2c0f:fb50', '2800:3f0', '2001:41d0', '2a03:b0c0'];

const IPV6_FORMS: ReadonlyArray<(r: R) => string> = [
  (r) => `${pick(r, PREFIXES)}:${hex(r)}:${hex(r)}:${hex(r)}:${hex(r)}:${hex(r)}:${hex(r)}`,
  (r) =>
    `${pick(r, PREFIXES)}:${hex(r)}:${hex(r)}:${hex(r)}:${hex(r)}:${hex(r)}:${hex(r)}`
      .split(':')
      .map((g) => g.padStart(4, '0').toUpperCase())
      .join(':'),
  (r) => `${pick(r, PREFIXES)}:${hex(r)}::${hex(r)}`,
  (r) => `${pick(r, PREFIXES)}:${hex(r)}:${hex(r)}::`,
  (r) => `${pick(r, PREFIXES)}::${hex(r)}:${hex(r)}:${hex(r)}`,
  (r) => `::ffff:${hex(r, 0x1000)}:${hex(r, 0x1000)}`,
  (r) => `::ffff:${int(r, 11, 223)}.${int(r, 0, 255)}.${int(r, 0, 255)}.${int(r, 1, 254)}`,
  (r) => `${pick(r, PREFIXES)}:${hex(r)}::${int(r, 11, 223)}.${int(r, 0, 255)}.${int(r, 0, 255)}.${int(r, 1, 254)}`,
  (r) => `fe80::${hex(r)}:${int(r, 16, 255).toString(16)}ff:fe${int(r, 16, 255).toString(16)}:${hex(r)}%${pick(r, ['eth0', 'enp0s3', 'wlan0', 'en0'])}`,
  (r) => `fe80::${hex(r)}:${hex(r)}%${int(r, 2, 12)}`,
  (r) => `${pick(r, PREFIXES)}:${hex(r)}:${hex(r)}::${hex(r)}/64`,
  (r) => `${pick(r, PREFIXES)}:${hex(r)}::/48`,
  (r) => `${pick(r, PREFIXES)}:${hex(r)}:${hex(r)}:${hex(r)}::${hex(r)}`.toUpperCase(),
  (r) => `fd${two(int(r, 10, 99))}:${hex(r)}:${hex(r)}:${hex(r)}::${hex(r)}`,
];

const IPV6_TEXTS = [
  'Accepted publickey for deploy from {v} port {k} ssh2',
  '{v} - - [06/Dec/2026:06:12:44 +0000] "GET /api/orders HTTP/1.1" 200 512',
  'X-Forwarded-For: {v}',
  '"client_ip": "{v}"',
  'inet6 {v} scope global dynamic',
  'ping6 {v}',
  'curl -g "http://[{v}]:{k}/metrics"',
  'ban {v} after repeated 401s',
  'peer={v} state=ESTABLISHED',
];

function ipv6s(r: R, count: number): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const value = (IPV6_FORMS[i % IPV6_FORMS.length] as (r: R) => string)(r);
    const plain = !value.includes('%') && !value.includes('/') && !value.endsWith(':');
    const template = pick(r, plain ? IPV6_TEXTS : IPV6_TEXTS.filter((t) => !t.includes('[{v}]')));
    out.push({ item: { kind: 'ipv6', value }, text: fill(template, { v: value, k: String(int(r, 1024, 65000)) }) });
  }
  return out;
}

// ---- cards -------------------------------------------------------------------------------------

/** The Luhn check digit of `body` (written here, not imported from the redactor). */
function luhnDigit(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = body.charCodeAt(body.length - 1 - i) - 48;
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}

/** [prefix, length, grouping] of card networks: Visa, Mastercard (both ranges), Amex, Discover, JCB, Diners, UnionPay, Mir, Maestro. */
const NETWORKS: ReadonlyArray<readonly [() => string, number, readonly number[]]> = [
  [() => '4', 16, [4, 4, 4, 4]],
  [() => '4', 13, [13]],
  [() => '5', 16, [4, 4, 4, 4]],
  [() => '27', 16, [4, 4, 4, 4]],
  [() => '37', 15, [4, 6, 5]],
  [() => '6011', 16, [4, 4, 4, 4]],
  [() => '3566', 16, [4, 4, 4, 4]],
  [() => '36', 14, [4, 6, 4]],
  [() => '62', 19, [4, 4, 4, 4, 3]],
  [() => '2202', 16, [4, 4, 4, 4]],
  [() => '6759', 19, [19]],
];

function cards(r: R, count: number): Entry[] {
  const texts = [
    'card {c} declined (insufficient funds)',
    '{"number": "{c}", "exp_month": 9, "exp_year": 2029}',
    'cc-number={c}&cvc=123',
    'charging {c} for order 1042',
    "INSERT INTO cards (pan) VALUES ('{c}');",
    'customer read out {c} on the call',
    'order,card\n1042,{c}',
    'Kartennummer: {c}',
  ];
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const [prefix, length, groups] = NETWORKS[i % NETWORKS.length] as readonly [() => string, number, readonly number[]];
    let body = prefix();
    if (body === '5') body += String(int(r, 1, 5));
    if (body === '27') body += pick(r, ['20', '10', '05']);
    body += digits(r, length - body.length - 1);
    const pan = `${body}${luhnDigit(body)}`;
    const sep = groups.length === 1 ? '' : pick(r, [' ', '-', ' ', '']);
    let at = 0;
    const value = groups
      .map((g) => {
        const part = pan.slice(at, at + g);
        at += g;
        return part;
      })
      .join(sep);
    out.push({ item: { kind: 'card', value }, text: fill(pick(r, texts), { c: value }) });
  }
  return out;
}

// ---- IBANs -------------------------------------------------------------------------------------

/** BBAN shapes: n digits, a upper-case letters, c alphanumerics. */
const IBAN_SHAPES: Record<string, string> = {
  DE: '18n',
  GB: '4a14n',
  FR: '10n11n2n',
  ES: '20n',
  IT: '1a10n12n',
  NL: '4a10n',
  PL: '24n',
  PT: '21n',
  NO: '11n',
  CH: '5n12n',
  AT: '16n',
  IE: '4a14n',
  SE: '20n',
  HR: '17n',
  SI: '15n',
  SK: '20n',
  EE: '16n',
  LV: '4a13n',
  IS: '22n',
  IL: '19n',
  UA: '6n19n',
  QA: '4a21n',
  EG: '25n',
  BG: '4a6n8n',
};

function drawBban(r: R, shape: string): string {
  let out = '';
  for (const [, n, k] of shape.matchAll(/(\d+)([nac])/gu)) {
    for (let i = 0; i < Number(n); i++) out += k === 'n' ? String(int(r, 0, 9)) : String.fromCharCode(65 + int(r, 0, 25));
  }
  return out;
}

function mod97Check(country: string, bban: string): string {
  const numeric = `${bban}${country}00`.replace(/[A-Z]/gu, (c) => String(c.charCodeAt(0) - 55));
  let rest = 0;
  for (const ch of numeric) rest = (rest * 10 + Number(ch)) % 97;
  return two(98 - rest);
}

/** An IBAN of `country` passing mod 97 and (as ibantools checks) its national check: drawn again until it does. */
function drawIban(r: R, country: string): string {
  for (;;) {
    const bban = drawBban(r, IBAN_SHAPES[country] as string);
    const iban = `${country}${mod97Check(country, bban)}${bban}`;
    if (isValidIBAN(iban)) return iban;
  }
}

function ibans(r: R, count: number): Entry[] {
  const countries = Object.keys(IBAN_SHAPES);
  const texts = [
    'IBAN {i}',
    '"iban": "{i}"',
    'payee,iban\nstorage-co,{i}',
    'please wire the deposit to {i} by Monday',
    'Bankverbindung: {i}',
    'beneficiary account {i} (ref INV-2291)',
    'refund to {i}',
  ];
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const compact = drawIban(r, countries[i % countries.length] as string);
    const style = r();
    const value = style < 0.45 ? compact.replace(/(.{4})(?=.)/gu, '$1 ') : style < 0.55 ? compact.toLowerCase() : compact;
    if (!isValidIBAN(electronicFormatIBAN(value) ?? '')) throw new Error(`corpus 7 drew an invalid IBAN ${value}`);
    out.push({ item: { kind: 'iban', value }, text: fill(pick(r, texts), { i: value }) });
  }
  return out;
}

// ---- national ids ------------------------------------------------------------------------------

const ODD_CF = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];
/** Italian codice fiscale check letter (odd positions through their table, even ones by value). */
export function codiceFiscaleCheck(first15: string): string {
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const c = first15[i] as string;
    const v = /\d/u.test(c) ? Number(c) : c.charCodeAt(0) - 65;
    sum += i % 2 === 0 ? (ODD_CF[v] as number) : v;
  }
  return String.fromCharCode(65 + (sum % 26));
}

const VERHOEFF_D = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
  [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
  [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
  [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
  [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
  [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
  [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
  [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
  [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
];
const VERHOEFF_P = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
  [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
  [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
  [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
  [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
  [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
  [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
];
const VERHOEFF_INV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9];
/** The Verhoeff check digit of `body` (Aadhaar's). */
export function verhoeffDigit(body: string): string {
  let c = 0;
  const rev = [...body].reverse();
  for (let i = 0; i < rev.length; i++) c = VERHOEFF_D[c]![VERHOEFF_P[(i + 1) % 8]![Number(rev[i])]!]!;
  return String(VERHOEFF_INV[c]);
}

const weighted = (s: string, weights: readonly number[]) => weights.reduce((a, w, i) => a + w * Number(s[i]), 0);

const ID_FORMS: ReadonlyArray<readonly [string, (r: R) => string]> = [
  [
    'ssn',
    (r) => {
      const area = pick(r, [int(r, 1, 665), int(r, 667, 899)]);
      return `${String(area).padStart(3, '0')}-${two(int(r, 1, 99))}-${String(int(r, 1, 9999)).padStart(4, '0')}`;
    },
  ],
  ['ssn', (r) => `${int(r, 100, 665)} ${two(int(r, 10, 99))} ${int(r, 1000, 9999)}`],
  [
    'nino',
    (r) => {
      const prefix = pick(r, ['AB', 'CE', 'HJ', 'KL', 'MR', 'PW', 'SE', 'WX', 'YZ']);
      const d = digits(r, 6);
      const suffix = pick(r, ['A', 'B', 'C', 'D']);
      return r() < 0.5 ? `${prefix} ${d.slice(0, 2)} ${d.slice(2, 4)} ${d.slice(4)} ${suffix}` : `${prefix}${d}${suffix}`;
    },
  ],
  [
    'insee',
    (r) => {
      const body = `${int(r, 1, 2)}${two(int(r, 40, 99))}${two(int(r, 1, 12))}${two(int(r, 1, 95))}${String(int(r, 1, 999)).padStart(3, '0')}${String(int(r, 1, 999)).padStart(3, '0')}`;
      const key = two(97 - Number(BigInt(body) % 97n));
      return r() < 0.5
        ? `${body[0]} ${body.slice(1, 3)} ${body.slice(3, 5)} ${body.slice(5, 7)} ${body.slice(7, 10)} ${body.slice(10)} ${key}`
        : `${body}${key}`;
    },
  ],
  [
    'dni',
    (r) => {
      const n = int(r, 10_000_000, 99_999_999);
      return `${n}${'TRWAGMYFPDXBNJZSQVHLCKE'[n % 23]}`;
    },
  ],
  [
    'nie',
    (r) => {
      const lead = int(r, 0, 2);
      const n = digits(r, 7);
      return `${'XYZ'[lead]}-${n}-${'TRWAGMYFPDXBNJZSQVHLCKE'[Number(`${lead}${n}`) % 23]}`;
    },
  ],
  [
    'codiceFiscale',
    (r) => {
      const letters = (n: number) => Array.from({ length: n }, () => String.fromCharCode(65 + int(r, 0, 25))).join('');
      const first15 = `${letters(6)}${two(int(r, 40, 99))}${pick(r, [...'ABCDEHLMPRST'])}${two(pick(r, [int(r, 1, 31), int(r, 41, 71)]))}${pick(r, [...'ABCDEFGHILM'])}${String(int(r, 1, 999)).padStart(3, '0')}`;
      return `${first15}${codiceFiscaleCheck(first15)}`;
    },
  ],
  [
    'aadhaar',
    (r) => {
      const body = `${int(r, 2, 9)}${digits(r, 10)}`;
      const n = `${body}${verhoeffDigit(body)}`;
      return r() < 0.6 ? `${n.slice(0, 4)} ${n.slice(4, 8)} ${n.slice(8)}` : n;
    },
  ],
  [
    'pan',
    (r) => {
      const letters = (n: number) => Array.from({ length: n }, () => String.fromCharCode(65 + int(r, 0, 25))).join('');
      return `${letters(3)}${pick(r, [...'PCHFAT'])}${letters(1)}${digits(r, 4)}${letters(1)}`;
    },
  ],
  [
    'cpf',
    (r) => {
      const nine = digits(r, 9);
      const d1 = ((weighted(nine, [10, 9, 8, 7, 6, 5, 4, 3, 2]) * 10) % 11) % 10;
      const d2 = ((weighted(`${nine}${d1}`, [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]) * 10) % 11) % 10;
      const n = `${nine}${d1}${d2}`;
      return r() < 0.6 ? `${n.slice(0, 3)}.${n.slice(3, 6)}.${n.slice(6, 9)}-${n.slice(9)}` : n;
    },
  ],
  [
    'chinaId',
    (r) => {
      const body = `${pick(r, ['110101', '310104', '440305', '510107', '330106'])}${int(r, 1955, 2004)}${two(int(r, 1, 12))}${two(int(r, 1, 28))}${digits(r, 3)}`;
      const sum = weighted(body, [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]);
      return `${body}${'10X98765432'[sum % 11]}`;
    },
  ],
  [
    'pesel',
    (r) => {
      const body = `${two(int(r, 50, 99))}${two(int(r, 1, 12))}${two(int(r, 1, 28))}${digits(r, 4)}`;
      return `${body}${(10 - (weighted(body, [1, 3, 7, 9, 1, 3, 7, 9, 1, 3]) % 10)) % 10}`;
    },
  ],
  [
    'bsn',
    (r) => {
      for (;;) {
        const eight = nz(r, 8);
        const rest = weighted(eight, [9, 8, 7, 6, 5, 4, 3, 2]) % 11;
        if (rest < 10) return `${eight}${rest}`;
      }
    },
  ],
  [
    'tckn',
    (r) => {
      const nine = nz(r, 9);
      const odd = Number(nine[0]) + Number(nine[2]) + Number(nine[4]) + Number(nine[6]) + Number(nine[8]);
      const even = Number(nine[1]) + Number(nine[3]) + Number(nine[5]) + Number(nine[7]);
      const d10 = (((odd * 7 - even) % 10) + 10) % 10;
      const d11 = ([...nine].reduce((a, c) => a + Number(c), 0) + d10) % 10;
      return `${nine}${d10}${d11}`;
    },
  ],
  [
    'ahv',
    (r) => {
      const body = `756${digits(r, 9)}`;
      const sum = [...body].reduce((a, c, i) => a + Number(c) * (i % 2 === 0 ? 1 : 3), 0);
      const n = `${body}${(10 - (sum % 10)) % 10}`;
      return `${n.slice(0, 3)}.${n.slice(3, 7)}.${n.slice(7, 11)}.${n.slice(11)}`;
    },
  ],
  [
    'saId',
    (r) => {
      const body = `${two(int(r, 50, 99))}${two(int(r, 1, 12))}${two(int(r, 1, 28))}${digits(r, 4)}08`;
      return `${body}${luhnDigit(body)}`;
    },
  ],
  [
    'sin',
    (r) => {
      const body = `${int(r, 1, 7)}${digits(r, 7)}`;
      const n = `${body}${luhnDigit(body)}`;
      return `${n.slice(0, 3)} ${n.slice(3, 6)} ${n.slice(6)}`;
    },
  ],
  [
    'rrn',
    (r) => {
      const body = `${two(int(r, 60, 99))}${two(int(r, 1, 12))}${two(int(r, 1, 28))}${int(r, 1, 2)}${digits(r, 5)}`;
      const check = (11 - (weighted(body, [2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5]) % 11)) % 10;
      return `${body.slice(0, 6)}-${body.slice(6)}${check}`;
    },
  ],
  [
    'nric',
    (r) => {
      const seven = digits(r, 7);
      const sum = weighted(seven, [2, 7, 6, 5, 4, 3, 2]);
      return `S${seven}${'JZIHGFEDCBA'[sum % 11]}`;
    },
  ],
];

/** Each id's texts: the cue a user or a form would write, a JSON field, a CSV header. */
const ID_TEXTS: Record<string, readonly string[]> = {
  ssn: ['SSN {v}', '{"ssn": "{v}"}', 'employee,ssn\n0042,{v}', 'her social is {v}'],
  nino: ['NI number: {v}', '"nino":"{v}"', 'national insurance {v} on the P60'],
  insee: ['numéro de sécu {v}', '"nir": "{v}"', 'n° sécurité sociale : {v}'],
  dni: ['DNI {v}', '{"dni":"{v}"}', 'documento: {v}'],
  nie: ['NIE {v}', 'extranjero con NIE {v}'],
  codiceFiscale: ['codice fiscale {v}', '"codiceFiscale": "{v}"', 'C.F. {v}'],
  aadhaar: ['Aadhaar {v}', '"aadhaar_no": "{v}"', 'UID {v} linked to the account'],
  pan: ['PAN {v}', '{"pan_number": "{v}"}'],
  cpf: ['CPF {v}', '"cpf":"{v}"', 'cliente com CPF {v}'],
  chinaId: ['身份证号：{v}', '"id_card": "{v}"', 'resident id {v}'],
  pesel: ['PESEL {v}', '"pesel": "{v}"'],
  bsn: ['BSN {v}', 'burgerservicenummer: {v}'],
  tckn: ['TC Kimlik No: {v}', '"tckn": "{v}"'],
  ahv: ['AHV-Nr. {v}', 'AVS {v}'],
  saId: ['SA ID number {v}', '"id_number": "{v}"'],
  sin: ['SIN {v}', 'social insurance number {v}'],
  rrn: ['주민등록번호 {v}', 'RRN {v}'],
  nric: ['NRIC {v}', '"nric": "{v}"'],
};

function nationalIds(r: R, count: number): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const [form, draw] = ID_FORMS[i % ID_FORMS.length] as readonly [string, (r: R) => string];
    const value = draw(r);
    out.push({ item: { kind: 'nationalId', value }, text: fill(pick(r, ID_TEXTS[form] as readonly string[]), { v: value }) });
  }
  return out;
}

// ---- e-mails -----------------------------------------------------------------------------------

const EMAIL_DOMAINS = [
  'studio.photography',
  'kunst.museum',
  'mail.eng.uni-stuttgart.de',
  'correo.com.br',
  'lab.ac.jp',
  'firma.berlin',
  'startup.ninja',
  'hq.africa',
  'agency.london',
  'flights.aero',
  'farm.coop',
  'post.co.nz',
  'dev.engineering',
  'shop.xn--p1ai',
  'school.edu.au',
  'bank.co.za',
];

function emails(r: R, count: number): Entry[] {
  const texts = [
    'reply-to: {m}',
    'git config user.email "{m}"',
    '"email": "{m}"',
    'forward the invoice to {m}',
    'name,email\nlead,{m}',
    'Send alerts to <{m}>',
    'mailto:{m}',
  ];
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const [g, s] = LATIN_PEOPLE[(i * 17 + 7) % LATIN_PEOPLE.length] as readonly [string, string];
    const [a, b] = stem(g, s).split('.') as [string, string];
    const local = pick(r, [
      `${a}+billing`,
      `${a}.${b}+ci-${int(r, 1, 99)}`,
      `${a.slice(0, 1)}${b}`,
      `${a}_${b}${int(r, 70, 99)}`,
      `${a}.${b}`.toUpperCase(),
      `${b}-${a}`,
    ]);
    const value = `${local}@${EMAIL_DOMAINS[i % EMAIL_DOMAINS.length]}`;
    out.push({ item: { kind: 'email', value }, text: fill(pick(r, texts), { m: value }) });
  }
  return out;
}

// ---- the corpus --------------------------------------------------------------------------------

/** The items with their texts, drawn from `random` (the same seed, the same corpus). */
export function heldOut7Entries(random: R): Entry[] {
  return [
    ...fullNames(random, 46),
    ...givenNames(random, 30),
    ...handles(random, 16),
    ...phones(random, 44),
    ...addresses(random, 36),
    ...ipv6s(random, 28),
    ...cards(random, 24),
    ...nationalIds(random, 38),
    ...ibans(random, 26),
    ...emails(random, 18),
  ];
}

export function heldOut7Records(random: R): Array<{ item: HeldOutItem; tool: 'claude' | 'codex'; line: string }> {
  // Place i·7 mod 15 spreads each kind over the fifteen places (7 and 15 are coprime).
  return heldOut7Entries(random).map(({ item, text }, i) => ({ item, ...placeText(text, (i * 7) % 15, i + 1) }));
}
