/**
 * A second held-out corpus of personal data (issue #40, written after the redactor's last
 * change and not used to tune it): forms the first held-out corpus (pii-heldout-corpus.ts) does
 * not have. Names inside tool output (git log, CSV exports, JSON API answers, sign-off lines,
 * names with particles, diacritics and hyphens); phone numbers of other countries and written
 * other ways (trunk prefix in brackets, dots, a `tel:` URI); IBANs of other countries, lower-case
 * or with the bank code in letters; national ids written other ways (an SSN without dashes, a
 * NINO with spaces, a Spanish NIE, an Italian codice fiscale, a Dutch BSN, a French INSEE number);
 * IPv6 in other forms (IPv4-mapped, upper case, zero-padded, bracketed with a port, with a zone);
 * addresses of other countries (Dutch, Spanish, Italian, Irish, a PO box, an abbreviated US
 * street type). Each item is placed in a transcript record by recordWithText (the same envelopes
 * as the first corpus), with its own seed.
 */
import { type HeldOutItem, recordWithText } from './pii-heldout-corpus.js';

export const HELD_OUT2_SEED = 90_210_733;

const r0 = <T>(r: () => number, list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;
const digits = (r: () => number, n: number) => Array.from({ length: n }, () => Math.floor(r() * 10)).join('');
const int = (r: () => number, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

/** ISO 13616 mod-97 check digits (written here). */
function ibanCheck(country: string, bban: string): string {
  const numeric = `${bban}${country}00`.replace(/[A-Z]/gu, (c) => String(c.charCodeAt(0) - 55));
  let rest = 0;
  for (const ch of numeric) rest = (rest * 10 + Number(ch)) % 97;
  return String(98 - rest).padStart(2, '0');
}

/** Spanish BBAN: bank, branch, two national check digits (weights 1, 2, 4, 8, 5, 10, 9, 7, 3, 6, mod 11), account. */
function spanishBban(r: () => number): string {
  const weights = [1, 2, 4, 8, 5, 10, 9, 7, 3, 6];
  const check = (ten: string) => {
    const d = 11 - ([...ten].reduce((a, c, i) => a + Number(c) * weights[i]!, 0) % 11);
    return String(d === 11 ? 0 : d === 10 ? 1 : d);
  };
  const bankBranch = digits(r, 8);
  const account = digits(r, 10);
  return `${bankBranch}${check(`00${bankBranch}`)}${check(account)}${account}`;
}

/** Dutch BSN: nine digits passing the 11-test (weights 9…2, −1). */
function bsn(r: () => number): string {
  for (;;) {
    const d = digits(r, 8);
    const sum = [...d].reduce((a, c, i) => a + Number(c) * (9 - i), 0);
    const last = sum % 11;
    if (last <= 9 && d[0] !== '0') return `${d}${last}`;
  }
}

/** Italian codice fiscale shape (its check letter computed as the standard does). */
function codiceFiscale(r: () => number): string {
  const L = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const letters = (n: number) => Array.from({ length: n }, () => r0(r, [...'BCDFGHLMNPRSTVZ'])).join('');
  const body = `${letters(3)}${letters(3)}${digits(r, 2)}${r0(r, [...'ABCDEHLMPRST'])}${String(int(r, 1, 71)).padStart(2, '0')}${r0(r, ['F205', 'H501', 'A944', 'L219'])}`;
  const odd: Record<string, number> = {};
  const oddValues = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];
  for (let i = 0; i < 26; i++) odd[L[i]!] = oddValues[i]!;
  for (let i = 0; i < 10; i++) odd[String(i)] = oddValues[i]!;
  let sum = 0;
  [...body].forEach((c, i) => {
    if (i % 2 === 0) sum += odd[c]!;
    else sum += /\d/u.test(c) ? Number(c) : L.indexOf(c);
  });
  return `${body}${L[sum % 26]}`;
}

const GIVEN = ['Oluwaseun', 'Ingrid', 'Tomasz', 'Ngozi', 'Björn', 'María José', 'Anh', 'Radek', 'Saoirse', 'Hamid', 'Liesbeth', 'Teodora'];
const SURNAMES = [
  'Bankole-Hughes',
  'Halvorsen',
  'Wierzbicki',
  'Eze',
  'Ásgeirsson',
  'García-López',
  'Nguyen',
  'Novotný',
  'van der Berg',
  'Rahimi',
  'De Smet',
  'Petrović',
];

const GENERATORS: Array<{ kind: HeldOutItem['kind']; make: (r: () => number) => string; templates: readonly string[] }> = [
  {
    kind: 'name',
    make: (r) => `${r0(r, GIVEN)} ${r0(r, SURNAMES)}`,
    templates: [
      'commit 9b2e7d1\nAuthor: {} <{}@users.noreply.github.com>\nDate:   Tue Nov 4 10:12:09 2026 +0100\n\n    billing: round VAT per line',
      'id,name,plan\n1042,{},pro\n1043,Acme GmbH,team',
      '{"id": 88, "assignee": "{}", "state": "open"}',
      'Signed-off-by: {}',
      'reviewers: {} (requested)',
      '{} opened this issue 3 days ago',
    ],
  },
  {
    kind: 'phone',
    make: (r) =>
      r0(r, [
        () => `+44 (0)20 7946 ${digits(r, 4)}`,
        () => `+33 6 ${digits(r, 2)} ${digits(r, 2)} ${digits(r, 2)} ${digits(r, 2)}`,
        () => `+91 98${digits(r, 3)} ${digits(r, 5)}`,
        () => `+55 11 9${digits(r, 4)}-${digits(r, 4)}`,
        () => `+353 87 ${digits(r, 3)} ${digits(r, 4)}`,
        () => `tel:+4930${digits(r, 7)}`,
        () => `+1.503.555.${digits(r, 4)}`,
      ])(),
    templates: ['mobile: {}', 'Call me on {} if the deploy fails.', '"phone": "{}"', 'escalation contact {}'],
  },
  {
    kind: 'iban',
    make: (r) => {
      const [country, bban] = r0(r, [
        () => ['NL', `${r0(r, ['ABNA', 'RABO', 'INGB'])}${digits(r, 10)}`] as const,
        () => ['GB', `${r0(r, ['NWBK', 'BARC', 'MIDL'])}${digits(r, 14)}`] as const,
        () => ['ES', spanishBban(r)] as const,
        () => ['DE', digits(r, 18)] as const,
      ])();
      const iban = `${country}${ibanCheck(country, bban)}${bban}`;
      const style = r();
      return style < 0.3 ? iban.toLowerCase() : style < 0.6 ? iban.replace(/(.{4})(?=.)/gu, '$1 ') : iban;
    },
    templates: ['iban: {}', 'Wire the deposit to {} (ref 2211).', 'payee.iban={}'],
  },
  {
    kind: 'nationalId',
    make: (r) =>
      r0(r, [
        () => `${int(r, 100, 665)}${int(r, 10, 99)}${int(r, 1000, 9999)}`,
        () => `${r0(r, ['AB', 'CE', 'JT', 'PR'])} ${digits(r, 2)} ${digits(r, 2)} ${digits(r, 2)} ${r0(r, ['A', 'B', 'C', 'D'])}`,
        () => {
          const prefix = r0(r, ['X', 'Y', 'Z']);
          const n = digits(r, 7);
          const value = Number(`${'XYZ'.indexOf(prefix)}${n}`);
          return `${prefix}${n}${'TRWAGMYFPDXBNJZSQVHLCKE'[value % 23]}`;
        },
        () => codiceFiscale(r),
        () => bsn(r),
        () => {
          const body = `${r0(r, ['1', '2'])}${digits(r, 2)}${String(int(r, 1, 12)).padStart(2, '0')}${r0(r, ['75', '69', '13'])}${digits(r, 3)}${digits(r, 3)}`;
          const key = String(97 - Number(BigInt(body) % 97n)).padStart(2, '0');
          return `${body} ${key}`;
        },
      ])(),
    templates: ['ssn: {}', 'national id {} (checked)', 'Il codice fiscale / NIE / BSN è {}.', 'id_number={}'],
  },
  {
    kind: 'ipv6',
    make: (r) => {
      const g = () => int(r, 0x100, 0xffff).toString(16);
      return r0(r, [
        () => `::ffff:${r0(r, [81, 145, 178])}.${int(r, 1, 254)}.${int(r, 1, 254)}.${int(r, 1, 254)}`,
        () => `2A01:${g()}:${g()}::${g()}`.toUpperCase(),
        () => `2001:0${int(r, 100, 999)}:${g()}:0000:0000:${g()}:${g()}:${g()}`,
        () => `[2a03:${g()}:${g()}::${g()}]:${int(r, 1024, 65000)}`,
        () => `2604:${g()}:${g()}:${g()}::${g()}%eth0`,
      ])();
    },
    templates: ['peer {} closed the stream', 'X-Forwarded-For: {}', 'listening on {}'],
  },
  {
    kind: 'address',
    make: (r) =>
      r0(r, [
        () => `${r0(r, ['Keizersgracht', 'Prinsengracht', 'Herengracht'])} ${int(r, 1, 600)}, ${int(r, 1011, 1099)} ${r0(r, ['CJ', 'AB', 'KL'])} Amsterdam`,
        () => `Calle ${r0(r, ['Mayor', 'de Alcalá', 'Serrano'])} ${int(r, 1, 200)}, ${int(r, 1, 9)}º ${r0(r, ['A', 'B', 'C'])}, 280${digits(r, 2)} Madrid`,
        () => `Via ${r0(r, ['Roma', 'Garibaldi', 'Cavour'])} ${int(r, 1, 150)}, 00${int(r, 118, 199)} Roma`,
        () =>
          `${int(r, 1, 90)} ${r0(r, ['Grafton Street', 'Dame Street', 'Camden Row'])}, Dublin ${int(r, 1, 8)}, D0${int(r, 1, 8)} ${r0(r, ['X2T8', 'K7W4', 'P2E5'])}`,
        () => `PO Box ${int(r, 100, 9999)}, ${r0(r, ['Anchorage, AK 99501', 'Helena, MT 59601', 'Dover, DE 19901'])}`,
        () =>
          `${int(r, 100, 9999)} ${r0(r, ['Cedar', 'Sycamore', 'Lakeshore'])} ${r0(r, ['Blvd', 'Ave', 'Pkwy', 'Rd'])}, ${r0(r, ['Madison, WI 53703', 'Austin, TX 78701', 'Salem, OR 97301'])}`,
      ])(),
    templates: ['ship_to: {}', 'Send the contract to {} by courier.', '"address": "{}"'],
  },
];

export const HELD_OUT2_KINDS = GENERATORS.map((g) => g.kind);

/** `perKind` items of each kind, each in one transcript record (the record's line is its place). */
export function heldOut2Records(random: () => number, perKind: number): Array<{ item: HeldOutItem; tool: 'claude' | 'codex'; line: string }> {
  const out: Array<{ item: HeldOutItem; tool: 'claude' | 'codex'; line: string }> = [];
  let n = 0;
  for (const generator of GENERATORS) {
    for (let i = 0; i < perKind; i++) {
      const value = generator.make(random);
      // A name's e-mail handle in the git template is its words joined (the handle survives with the name).
      const text = r0(random, generator.templates)
        .replace('{}', value)
        .replace('{}', value.toLowerCase().replace(/[^a-z]+/gu, '.'));
      n++;
      const { tool, line } = recordWithText(text, n, n, random);
      out.push({ item: { kind: generator.kind, value }, tool, line });
    }
  }
  return out;
}
