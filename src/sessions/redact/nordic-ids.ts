/**
 * National identity numbers built from a birth date and a check (pii.ts, kind `ids`): the Swedish
 * personnummer (Luhn), the Finnish henkilötunnus (mod 31 check character), the Polish PESEL
 * (weighted check digit, the month carrying the century) and the Danish CPR number (a date, then
 * four digits; since 2007 without the mod 11 check, so it is taken only when its check holds or a
 * word naming it stands just before), the French NIR (month, then the mod 97 key), the Norwegian
 * fødselsnummer (two mod 11 check digits) and the Belgian national number (mod 97). Each is accepted only when its date exists.
 */

export interface IdSpan {
  start: number;
  end: number;
}

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const days = [31, year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return day <= days[month - 1]!;
}

/** Luhn checksum over the digits of `text`. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Swedish personnummer: [CC]YYMMDD, - or + (over 100), NNNC; the day plus 60 for a samordningsnummer; Luhn over the ten digits. */
const PERSONNUMMER = /(?<![\w-])(?:(?:19|20)\d{2}|\d{2})(\d{2})(\d{2})[-+](\d{3})(\d)(?![\w-])/gu;
/** Finnish henkilötunnus: DDMMYY, the century sign (+ - A–F, U–Y), three digits and the mod 31 check character. */
const HETU = /(?<![\w-])(\d{2})(\d{2})(\d{2})([-+A-FU-Y])(\d{3})([0-9A-FHJ-NPR-Y])(?![\w-])/gu;
const HETU_CHECK = '0123456789ABCDEFHJKLMNPRSTUVWXY';
/** Polish PESEL: YYMMDD (the month plus 20, 40, 60 or 80 by century), four digits and a weighted check digit. */
const PESEL = /(?<![\w.,-])\d{11}(?![\w-]|[.,]\d)/gu;
const PESEL_WEIGHTS = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3];
/** Danish CPR number: DDMMYY-NNNN. */
const CPR = /(?<![\w-])(\d{2})(\d{2})(\d{2})-(\d{4})(?![\w-])/gu;
const CPR_WEIGHTS = [4, 3, 2, 7, 6, 5, 4, 3, 2, 1];
/** Words naming a CPR number, or any national id number, just before it (cpr, CPR-nr., personnummer, PESEL, national id). */
const CPR_CONTEXT =
  /\b(?:cpr(?:[ .-]?(?:nr|nummer|no)\.?)?|personnummer|henkilötunnus|hetu|pesel|fødselsnummer|national[ _-]?id(?:[ _-]?(?:number|no\.?))?|id[ _-]?number|personal[ _-]?(?:id|number))[\s:.#-]{0,4}$/iu;

/** Words naming a Swedish personnummer just before it. */
const PNR_CONTEXT = /\b(?:personnummer|person(?:al)? (?:id(?:entity)? )?number|pnr|samordningsnummer)[\s:.#-]{0,4}$/iu;

/** The spans of `pattern`'s matches in `text` that `accept` takes. */
export function spansOf(text: string, pattern: RegExp, accept: (m: RegExpExecArray) => boolean = () => true): IdSpan[] {
  return [...text.matchAll(pattern)].filter(accept).map((m) => ({ start: m.index, end: m.index + m[0].length }));
}

export function swedishPersonnummer(value: string): boolean {
  // A copy without the global flag: the scan below runs the shared pattern while calling this.
  const m = new RegExp(`^(?:${PERSONNUMMER.source})$`, 'u').exec(value);
  if (m === null) return false;
  const digits = value.replace(/\D/gu, '').slice(-10);
  const month = Number(m[1]);
  const day = Number(m[2]) > 60 ? Number(m[2]) - 60 : Number(m[2]);
  return validDate(2000, month, day) && luhnValid(digits);
}

export function finnishHetu(value: string): boolean {
  const m = new RegExp(`^(?:${HETU.source})$`, 'u').exec(value);
  if (m === null) return false;
  const [, dd, mm, yy, , individual, check] = m;
  if (!validDate(2000 + Number(yy), Number(mm), Number(dd)) || Number(individual) < 2) return false;
  return HETU_CHECK[Number(`${dd}${mm}${yy}${individual}`) % 31] === check;
}

export function polishPesel(value: string): boolean {
  if (!/^\d{11}$/u.test(value) || /^(\d)\1+$/u.test(value)) return false;
  const sum = PESEL_WEIGHTS.reduce((a, w, i) => a + w * (value.charCodeAt(i) - 48), 0);
  if ((10 - (sum % 10)) % 10 !== value.charCodeAt(10) - 48) return false;
  const coded = Number(value.slice(2, 4));
  const century = [1900, 2000, 2100, 2200, 1800][Math.floor(coded / 20)]!;
  return validDate(century + Number(value.slice(0, 2)), coded % 20, Number(value.slice(4, 6)));
}

/** A Danish CPR number's date exists and its (pre-2007) mod 11 check holds. */
export function danishCprChecked(value: string): boolean {
  const digits = value.replace('-', '');
  if (!/^\d{10}$/u.test(digits) || !validDate(2000, Number(digits.slice(2, 4)), Number(digits.slice(0, 2)))) return false;
  return CPR_WEIGHTS.reduce((a, w, i) => a + w * (digits.charCodeAt(i) - 48), 0) % 11 === 0;
}

/** French NIR (INSEE number): sex, year, month, department (2A/2B for Corsica), commune, order, then the key 97 − (the 13 digits mod 97). */
const NIR = /(?<![\w-])[12] ?\d{2} ?(?:0[1-9]|1[0-2]) ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?![\w-])/gu;

export function frenchNir(value: string): boolean {
  const compact = value.replace(/ /gu, '');
  if (!/^[12]\d{4}(?:\d{2}|2[AB])\d{8}$/u.test(compact)) return false;
  // Corsica: 2A reads as 19, 2B as 18.
  const digits = compact.slice(0, 13).replace('2A', '19').replace('2B', '18');
  let rest = 0;
  for (const ch of digits) rest = (rest * 10 + Number(ch)) % 97;
  return 97 - rest === Number(compact.slice(13));
}

/** Norwegian fødselsnummer (or D-number, the day plus 40): DDMMYY, three digits, two mod 11 check digits. */
const FNR = /(?<![\w.,-])\d{11}(?![\w-]|[.,]\d)/gu;
const FNR_K1 = [3, 7, 6, 1, 8, 9, 4, 5, 2];
const FNR_K2 = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2];

export function norwegianFnr(value: string): boolean {
  if (!/^\d{11}$/u.test(value) || /^(\d)\1+$/u.test(value)) return false;
  const check = (weights: number[]) => {
    const rest = 11 - (weights.reduce((a, w, i) => a + w * (value.charCodeAt(i) - 48), 0) % 11);
    return rest === 11 ? 0 : rest;
  };
  if (check(FNR_K1) !== value.charCodeAt(9) - 48 || check(FNR_K2) !== value.charCodeAt(10) - 48) return false;
  const day = Number(value.slice(0, 2));
  return validDate(2000, Number(value.slice(2, 4)), day > 40 ? day - 40 : day);
}

/**
 * Belgian national number (rijksregisternummer): YY.MM.DD-SSS.CC, the check 97 − (the nine digits
 * mod 97), with 2 before them for those born since 2000. Written with its dots and dash it is
 * taken as is; eleven bare digits only after a word naming it.
 */
const BE_NN = /(?<![\w.-])(\d{2})\.?(\d{2})\.?(\d{2})-?(\d{3})\.?(\d{2})(?![\w-]|[.,]\d)/gu;
const BE_NN_CONTEXT =
  /\b(?:rijksregisternummer|rijksregister|numéro national|numéro de registre national|national (?:register|registry) number|insz|niss)[\s:.#-]{0,4}$/iu;

export function belgianNationalNumber(value: string): boolean {
  const digits = value.replace(/\D/gu, '');
  if (digits.length !== 11 || !validDate(2000, Number(digits.slice(2, 4)), Number(digits.slice(4, 6)))) return false;
  const body = Number(digits.slice(0, 9));
  const key = Number(digits.slice(9));
  return 97 - (body % 97) === key || 97 - ((2_000_000_000 + body) % 97) === key;
}

/** The spans of these national ids in `text`. */
export function nordicIdSpans(text: string): IdSpan[] {
  if (!/\d(?:[ .-]?\d){5}/u.test(text)) return [];
  return [
    // The twelve-digit form (with the century) reads like a dated build or batch id (20240115-1234), so a word naming it must come first.
    ...spansOf(text, PERSONNUMMER, (m) => swedishPersonnummer(m[0]) && (m[0].length < 12 || PNR_CONTEXT.test(text.slice(Math.max(0, m.index - 24), m.index)))),
    ...spansOf(text, HETU, (m) => finnishHetu(m[0])),
    ...spansOf(text, PESEL, (m) => polishPesel(m[0])),
    ...spansOf(text, NIR, (m) => frenchNir(m[0])),
    ...spansOf(text, FNR, (m) => norwegianFnr(m[0])),
    ...spansOf(text, BE_NN, (m) => belgianNationalNumber(m[0]) && (/\D/u.test(m[0]) || BE_NN_CONTEXT.test(text.slice(Math.max(0, m.index - 40), m.index)))),
    ...spansOf(
      text,
      CPR,
      (m) => validDate(2000, Number(m[2]), Number(m[1])) && (danishCprChecked(m[0]) || CPR_CONTEXT.test(text.slice(Math.max(0, m.index - 24), m.index))),
    ),
  ];
}
