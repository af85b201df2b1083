/**
 * A third held-out corpus of personal data (issue #40), written after the detectors' last change
 * in this pass and run once as written: its figures are reported as measured, and the detectors
 * were not changed after seeing them. Forms neither earlier corpus has: names after "Dear Dr.",
 * "cc:", a signature dash, "@" mentions and a JSON `author.name`; phone numbers with a 00 prefix, a
 * bracketed country code, Chinese, South African and Turkish numbers; Polish, Portuguese and
 * Austrian IBANs (with their national check digits since the generator's fix: the first version
 * drew Polish and Portuguese ones without them, which ibantools rightly refused); Swedish personnummer, Finnish HETU, Polish PESEL and Danish CPR numbers (all
 * with their checks); IPv6 in CIDR, NAT64 and 6to4 forms; Australian, Canadian and UK
 * house-number-letter addresses.
 */
import type { HeldOutItem } from './pii-heldout-corpus.js';
import { recordWithText } from './pii-heldout-corpus.js';

export const HELD_OUT3_SEED = 31_415_926;

const pick = <T>(r: () => number, list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;
const digits = (r: () => number, n: number) => Array.from({ length: n }, () => Math.floor(r() * 10)).join('');
const int = (r: () => number, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
const two = (n: number) => String(n).padStart(2, '0');

function mod97(country: string, bban: string): string {
  const numeric = `${bban}${country}00`.replace(/[A-Z]/gu, (c) => String(c.charCodeAt(0) - 55));
  let rest = 0;
  for (const ch of numeric) rest = (rest * 10 + Number(ch)) % 97;
  return two(98 - rest);
}

/** A Polish BBAN with its bank code's check digit (the 8th, weights 3 9 7 1 3 9 7 over the first seven, as ibantools checks). */
function polishBban(drawn: string): string {
  const weights = [3, 9, 7, 1, 3, 9, 7];
  const sum = weights.reduce((a, w, i) => a + w * Number(drawn[i]), 0);
  return `${drawn.slice(0, 7)}${(10 - (sum % 10)) % 10}${drawn.slice(8)}`;
}

/** A Portuguese BBAN (NIB) with its two check digits: the 21 digits leave 1 modulo 97 (ISO 7064 mod 97-10). */
function portugueseBban(drawn: string): string {
  const body = drawn.slice(0, 19);
  let rest = 0;
  for (const ch of `${body}00`) rest = (rest * 10 + Number(ch)) % 97;
  return `${body}${two(98 - rest)}`;
}

function luhn(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}

const GIVEN = ['Ayodele', 'Signe', 'Wojciech', 'Ximena', 'Tuomas', 'Fatou', 'Henrik', 'Nilufar', 'Ciarán', 'Paulina'];
const SURNAMES = ['Adebayo', 'Kristiansen', 'Zieliński', 'Quispe', 'Virtanen', 'Diallo', 'Holmberg', 'Karimova', 'Ó Briain', 'Szymańska'];

const GENERATORS: Array<{ kind: HeldOutItem['kind']; make: (r: () => number) => string; templates: readonly string[] }> = [
  {
    kind: 'name',
    make: (r) => `${pick(r, GIVEN)} ${pick(r, SURNAMES)}`,
    templates: [
      'Dear Dr. {},\nplease find the invoice attached.',
      'cc: {}',
      'Thanks again,\n— {}',
      '@{} can you review this?',
      '{"author": {"login": "dev42", "name": "{}"}}',
    ],
  },
  {
    kind: 'phone',
    make: (r) =>
      pick(r, [
        () => `0044 20 7946 ${digits(r, 4)}`,
        () => `(+49) 30 ${digits(r, 7)}`,
        () => `+86 138 ${digits(r, 4)} ${digits(r, 4)}`,
        () => `+27 82 ${digits(r, 3)} ${digits(r, 4)}`,
        () => `+90 532 ${digits(r, 3)} ${digits(r, 2)} ${digits(r, 2)}`,
      ])(),
    templates: ['phone number: {}', 'Reach the courier at {} after 6pm.', 'whatsapp {}'],
  },
  {
    kind: 'iban',
    make: (r) => {
      const [country, bban] = pick(r, [
        () => ['PL', polishBban(digits(r, 24))] as const,
        () => ['PT', portugueseBban(`0002${digits(r, 17)}`)] as const,
        () => ['AT', digits(r, 16)] as const,
      ])();
      return `${country}${mod97(country, bban)}${bban}`.replace(/(.{4})(?=.)/gu, '$1 ');
    },
    templates: ['konto: {}', 'Refund goes to {} (verified).'],
  },
  {
    kind: 'nationalId',
    make: (r) =>
      pick(r, [
        () => {
          const body = `${two(int(r, 50, 99))}${two(int(r, 1, 12))}${two(int(r, 1, 28))}${digits(r, 3)}`;
          return `${body.slice(0, 6)}-${body.slice(6)}${luhn(body)}`;
        },
        () => {
          const date = `${two(int(r, 1, 28))}${two(int(r, 1, 12))}${two(int(r, 50, 99))}`;
          const individual = String(int(r, 2, 899)).padStart(3, '0');
          return `${date}-${individual}${'0123456789ABCDEFHJKLMNPRSTUVWXY'[Number(`${date}${individual}`) % 31]}`;
        },
        () => {
          const body = `${two(int(r, 50, 99))}${two(int(r, 1, 12))}${two(int(r, 1, 28))}${digits(r, 4)}`;
          const weights = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3];
          const sum = [...body].reduce((a, c, i) => a + Number(c) * weights[i]!, 0);
          return `${body}${(10 - (sum % 10)) % 10}`;
        },
        () => `${two(int(r, 1, 28))}${two(int(r, 1, 12))}${two(int(r, 50, 99))}-${digits(r, 4)}`,
      ])(),
    templates: ['personnummer: {}', 'henkilötunnus {}', 'PESEL {} (from the form)', 'CPR-nr. {}'],
  },
  {
    kind: 'ipv6',
    make: (r) => {
      const g = () => int(r, 0x100, 0xffff).toString(16);
      return pick(r, [() => `2a0${int(r, 1, 9)}:${g()}:${g()}::/48`, () => `64:ff9b::${g()}:${g()}`, () => `2002:${g()}:${g()}::${g()}`])();
    },
    templates: ['allowlist {} for the office', 'src={} dst=10.0.0.5'],
  },
  {
    kind: 'address',
    make: (r) =>
      pick(r, [
        () =>
          `Level ${int(r, 2, 30)}, ${int(r, 1, 400)} ${pick(r, ['Pitt St', 'George St', 'Collins St'])}, ${pick(r, ['Sydney NSW 2000', 'Melbourne VIC 3000'])}`,
        () =>
          `${int(r, 100, 4000)} Rue ${pick(r, ['Sainte-Catherine O', 'Saint-Denis', 'Sherbrooke E'])}, Montréal, QC H${int(r, 1, 4)}${pick(r, ['G', 'X', 'A'])} ${int(r, 1, 9)}${pick(r, ['P', 'K', 'B'])}${int(r, 1, 9)}`,
        () =>
          `${int(r, 1, 300)}${pick(r, ['A', 'B', 'C'])} ${pick(r, ['Baker Street', 'Gloucester Road', 'Kings Road'])}, London ${pick(r, ['NW1 6XE', 'SW7 4QH', 'SW3 5UE'])}`,
      ])(),
    templates: ['deliver to: {}', 'Our new office is at {}.'],
  },
];

export const HELD_OUT3_KINDS = GENERATORS.map((g) => g.kind);

export function heldOut3Records(random: () => number, perKind: number): Array<{ item: HeldOutItem; tool: 'claude' | 'codex'; line: string }> {
  const out: Array<{ item: HeldOutItem; tool: 'claude' | 'codex'; line: string }> = [];
  let n = 0;
  for (const generator of GENERATORS) {
    for (let i = 0; i < perKind; i++) {
      const value = generator.make(random);
      n++;
      const { tool, line } = recordWithText(pick(random, generator.templates).replace('{}', value), n, n, random);
      out.push({ item: { kind: generator.kind, value }, tool, line });
    }
  }
  return out;
}
