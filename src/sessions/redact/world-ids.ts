/**
 * National identity and tax numbers outside Europe's date-based ones (pii.ts, kind `ids`):
 * those with a check strong enough to stand alone in their written form — the Brazilian CPF
 * (ddd.ddd.ddd-dd, two mod 11 digits), the Aadhaar number of India (4-4-4 groups, Verhoeff), its PAN
 * (five letters with a holder-type letter, four digits, a letter), the German tax id in its
 * 2-3-3-3 groups (ISO 7064 check, one digit repeated) — and any number after a word naming a
 * national id, tax or social insurance number, whatever its country: a label says what follows,
 * and a number of that shape after it is rarely anything else. The checks keep bare digit runs
 * in code (ids, timestamps) out.
 */

import { spansOf, type IdSpan } from './nordic-ids.js';

/** The product of the dihedral group D5 (0–4 rotations, 5–9 reflections): the Verhoeff check's multiplication. */
function dihedral(j: number, k: number): number {
  if (j < 5) return k < 5 ? (j + k) % 5 : 5 + ((j + k) % 5);
  return k < 5 ? 5 + ((j - k + 5) % 5) : (j - k + 5) % 5;
}
/** Verhoeff's permutation, applied to a digit once for each place from the right (it repeats after eight). */
const VERHOEFF_PERMUTATION = [1, 5, 7, 6, 2, 8, 3, 0, 9, 4];

/** Verhoeff over a digit string whose last digit is the check. */
export function verhoeffValid(digits: string): boolean {
  let c = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    for (let k = 0; k < i % 8; k++) digit = VERHOEFF_PERMUTATION[digit]!;
    c = dihedral(c, digit);
  }
  return c === 0;
}

/** Aadhaar: twelve digits, the first 2–9, Verhoeff check. */
export function aadhaarValid(value: string): boolean {
  const d = value.replace(/\D/gu, '');
  return /^[2-9]\d{11}$/u.test(d) && verhoeffValid(d) && !/^(\d)\1+$/u.test(d);
}

/** CPF: eleven digits, two mod 11 check digits; a run of one digit is not issued. */
export function cpfValid(value: string): boolean {
  const d = value.replace(/\D/gu, '');
  if (!/^\d{11}$/u.test(d) || /^(\d)\1+$/u.test(d)) return false;
  const digit = (n: number) => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += (d.charCodeAt(i) - 48) * (n + 1 - i);
    return ((sum * 10) % 11) % 10;
  };
  return digit(9) === d.charCodeAt(9) - 48 && digit(10) === d.charCodeAt(10) - 48;
}

/** German Steuer-ID: eleven digits, no leading 0, one digit two or three times among the first ten, ISO 7064 mod 11,10 check. */
export function steuerIdValid(value: string): boolean {
  const d = value.replace(/\D/gu, '');
  if (!/^[1-9]\d{10}$/u.test(d)) return false;
  const counts = new Map<string, number>();
  for (const c of d.slice(0, 10)) counts.set(c, (counts.get(c) ?? 0) + 1);
  const repeated = [...counts.values()].filter((n) => n > 1);
  if (repeated.length !== 1 || repeated[0]! > 3) return false;
  let product = 10;
  for (let i = 0; i < 10; i++) {
    let sum = (d.charCodeAt(i) - 48 + product) % 10;
    if (sum === 0) sum = 10;
    product = (sum * 2) % 11;
  }
  const check = (11 - product) % 10;
  return check === d.charCodeAt(10) - 48;
}

const CPF = /(?<![\w.-])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\w-]|\.\d)/gu;
const AADHAAR = /(?<![\w-])[2-9]\d{3}[ -]\d{4}[ -]\d{4}(?![\w-]|[ -]\d)/gu;
/**
 * An Aadhaar number written without groups after "UID" (the issuer's own word for it, any case):
 * twelve digits with a valid Verhoeff check. Without the word a bare run of twelve digits is as
 * often an order or account number, and one in ten passes the check by chance.
 */
const UID_AADHAAR =
  /(?<![\p{L}\d_])uid(?:ai)?(?![\p{L}\d_])[^\p{L}\d\n]{0,6}(?:(?:no\.?|number|#)[^\p{L}\d\n]{0,3})?([2-9]\d{3}[ -]?\d{4}[ -]?\d{4})(?![\w-])/dgiu;
/** PAN: the fourth letter is the holder type (P person, C company, H, F, A, T, B, L, J, G). */
const PAN = /(?<![\w-])[A-Z]{3}[PCHFATBLJG][A-Z]\d{4}[A-Z](?![\w-])/gu;
const STEUER_ID_GROUPED = /(?<![\w-])[1-9]\d ?\d{3} ?\d{3} ?\d{3}(?![\w-]| \d)/gu;

/**
 * Words naming a national id, tax or social insurance number, in the languages a transcript is
 * likely to hold them. What may follow: a colon, "no.", "number", "#", then the value.
 */
const ID_LABEL = String.raw`(?:ssn|social security(?: number| no\.?)?|social insurance(?: number| no\.?)?|national insurance(?: number| no\.?)?|nino|ni number|national[ _-]?id(?:entity)?(?:[ _-]?(?:card|number|no\.?))?|id[ _-]?(?:number|no\.?|card)|identity (?:card |document )?(?:number|no\.?)|personal (?:id|identification|code|number)|tax[ _-]?(?:id|payer|file|identification)(?:[ _-]?(?:number|no\.?))?|tfn|itin|steuer-?id|steuer-?identifikationsnummer|steueridentifikationsnummer|steuer-?nr\.?|idnr\.?|personalausweis(?:nummer)?|sozialversicherungsnummer|aadhaar(?:[ _-]?(?:no\.?|number|nr))?|uid(?:ai)? (?:no\.?|number)|tc kimlik(?: no\.?)?|kimlik(?: no\.?)?|tckn|ahv(?:-nr\.?)?|avs|rrn|resident id|social|id[ _-]?card|주민등록번호|身份证号?(?:码)?|uidai|pan (?:card|no\.?|number)|cpf|cnpj|cédula|curp|dni|nss|codice fiscale|bsn|burgerservicenummer|sofinummer|insee|numéro de sécurité sociale|sécurité sociale|personnummer|fødselsnummer|henkilötunnus|hetu|pesel|cpr(?:[ .-]?nr\.?)?|amka|egn|oib|emšo|jmbg|my ?number|mynumber|nric|hkid|kennitala|ppsn|pps number|medicare(?: number| no\.?)?|passport(?: number| no\.?)?)`;
/** Labels that are also English words or common abbreviations (sin, pan, tin, fin): in capitals only. */
const ID_ACRONYM = `(?:SIN|TIN|EIN|PAN|RG|RUT|NIE|NIF|CIF|NIR|FIN|PPS|UTR|TFN|SSN|BSN|NI)`;
const VALUE = String.raw`["'\\]*\s*(?:[:=#：]|is|was)?["'\\]*\s*(?:no\.?|number|#)?\s*["'\\]*((?=[A-Z0-9.\- /]*\d[A-Z0-9.\- /]*\d[A-Z0-9.\- /]*\d[A-Z0-9.\- /]*\d[A-Z0-9.\- /]*\d[A-Z0-9.\- /]*\d)[A-Z0-9](?:[A-Z0-9]|[.\- /](?=[A-Z0-9])){5,19})(?![\p{L}\d_])`;
const LABELLED_ACRONYM = new RegExp(String.raw`(?<![\p{L}\d_])${ID_ACRONYM}${VALUE}`, 'dgu');
const LABELLED_ID = new RegExp(String.raw`(?<![\p{L}\d_])${ID_LABEL}${VALUE}`, 'dgiu');

/** The spans of these ids in `text`. */
export function worldIdSpans(text: string): IdSpan[] {
  if (!/\d\d/u.test(text)) return [];
  const out = [
    ...spansOf(text, CPF, (m) => cpfValid(m[0])),
    ...spansOf(text, AADHAAR, (m) => aadhaarValid(m[0])),
    ...spansOf(text, PAN),
    ...spansOf(text, STEUER_ID_GROUPED, (m) => m[0].includes(' ') && steuerIdValid(m[0])),
  ];
  for (const m of text.matchAll(UID_AADHAAR)) {
    if (!aadhaarValid(m[1]!)) continue;
    const [start, end] = m.indices![1]!;
    out.push({ start, end });
  }
  for (const pattern of [LABELLED_ID, LABELLED_ACRONYM]) {
    for (const m of text.matchAll(pattern)) {
      const [start, end] = m.indices![1]!;
      const value = m[1]!;
      // A value is an id's shape: mostly digits (letters only as a prefix or check), not a date or a version.
      const digits = value.replace(/\D/gu, '').length;
      if (digits < 6 || /^\d{4}-\d{2}-\d{2}$/u.test(value) || /^(\d)\1+$/u.test(value.replace(/\D/gu, ''))) continue;
      out.push({ start, end });
    }
  }
  // A label both spelled out and as an acronym (TFN, tax file number) finds the same value twice.
  return out.filter((span, k) => out.findIndex((o) => o.start === span.start && o.end === span.end) === k);
}
