import type { PiiKind } from '../../src/sessions/redact/pii.js';

/**
 * A planted corpus of personal data for `sessions redact --pii` (issue #40): generated values of
 * every kind (valid checksums where the kind has one), written into sentences as users, tools and
 * assistants write them, and placed in Claude Code and Codex transcript lines — user text, tool
 * results and tool-call arguments (Codex's arguments are JSON inside JSON, escaped twice).
 */

export interface PlantedItem {
  kind: PiiKind;
  value: string;
}

const FIRST = [
  'Maria',
  'John',
  'Olga',
  'Wei',
  'Lena',
  'Tomás',
  'Sarah',
  'David',
  'Fatima',
  'Hiroshi',
  'Emma',
  'Carlos',
  'Anna',
  'James',
  'Ingrid',
  'Ahmed',
  'Laura',
  'Peter',
  'Sofia',
  'Michael',
];
const LAST = [
  'Gonzalez',
  'Smith',
  'Petrova',
  'Zhang',
  'Fischer',
  'Oliveira',
  'Johnson',
  'Miller',
  'Khan',
  'Tanaka',
  'Brown',
  'Garcia',
  'Nowak',
  'Wilson',
  'Larsen',
  'Hassan',
  'Rossi',
  'Schmidt',
  'Costa',
  'Anderson',
];
const STREETS = ['Oak', 'Maple', 'Elm Grove', 'Pennsylvania', 'Sunset', 'Lincoln', 'Cedar', 'Park'];
const STREET_TYPES = ['Street', 'Avenue', 'Road', 'Boulevard', 'Lane', 'Drive'];
const CITIES = ['Springfield', 'Portland', 'Austin', 'Denver', 'Madison'];
const STATES = ['IL', 'OR', 'TX', 'CO', 'WI'];
const DE_STREETS = ['Hauptstraße', 'Bahnhofstraße', 'Lindenweg', 'Marktplatz'];
const DE_CITIES = ['Berlin', 'München', 'Hamburg', 'Köln'];

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

/** mod-97 check digits of an IBAN (ISO 13616), computed here independently of ibantools. */
function ibanCheck(country: string, bban: string): string {
  const digits = `${bban}${country}00`.replace(/[A-Z]/gu, (c) => String(c.charCodeAt(0) - 55));
  let rest = 0;
  for (const ch of digits) rest = (rest * 10 + Number(ch)) % 97;
  return String(98 - rest).padStart(2, '0');
}

const digits = (random: () => number, n: number) => Array.from({ length: n }, () => Math.floor(random() * 10)).join('');
const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;

const GENERATORS: Record<PiiKind, (random: () => number) => string> = {
  names: (r) => `${pick(r, FIRST)} ${pick(r, LAST)}`,
  phones: (r) =>
    pick(r, [
      () => `+1 ${pick(r, ['415', '212', '312', '646'])}-555-${digits(r, 4)}`,
      () => `(${pick(r, ['415', '212', '503', '617'])}) 555-${digits(r, 4)}`,
      () => `+44 20 7946 ${digits(r, 4)}`,
      () => `+49 30 ${digits(r, 8)}`,
      () => `+33 1 ${digits(r, 2)} ${digits(r, 2)} ${digits(r, 2)} ${digits(r, 2)}`,
    ])(),
  addresses: (r) =>
    r() < 0.7
      ? `${1 + Math.floor(r() * 9000)} ${pick(r, STREETS)} ${pick(r, STREET_TYPES)}, ${pick(r, CITIES)}, ${pick(r, STATES)} ${digits(r, 5)}`
      : `${pick(r, DE_STREETS)} ${1 + Math.floor(r() * 120)}, ${1 + Math.floor(r() * 8)}${digits(r, 4)} ${pick(r, DE_CITIES)}`,
  ips: (r) =>
    r() < 0.5
      ? `${pick(r, ['203.0.113', '198.51.100', '81.2.69', '151.101.1'])}.${1 + Math.floor(r() * 250)}`
      : `2001:db8:${Math.floor(r() * 65535).toString(16)}:${Math.floor(r() * 65535).toString(16)}::${Math.floor(r() * 4095 + 1).toString(16)}`,
  cards: (r) => {
    const prefix = pick(r, ['4', '51', '55', '37', '6011']);
    const length = prefix === '37' ? 15 : 16;
    const body = `${prefix}${digits(r, length - prefix.length - 1)}`;
    const card = `${body}${luhnDigit(body)}`;
    return r() < 0.5 ? card.replace(/(\d{4})(?=\d)/gu, '$1 ') : card;
  },
  ids: (r) =>
    pick(r, [
      () => `${100 + Math.floor(r() * 565)}-${10 + Math.floor(r() * 89)}-${1000 + Math.floor(r() * 8999)}`,
      () => {
        const n = 10_000_000 + Math.floor(r() * 89_999_999);
        return `${n}${'TRWAGMYFPDXBNJZSQVHLCKE'[n % 23]}`;
      },
      () => `${pick(r, ['AB', 'CE', 'JK', 'PR'])} ${digits(r, 2)} ${digits(r, 2)} ${digits(r, 2)} ${pick(r, ['A', 'B', 'C', 'D'])}`,
    ])(),
  ibans: (r) => {
    const [country, bban] = pick(r, [
      ['DE', digits(r, 18)],
      ['GB', `NWBK${digits(r, 14)}`],
      ['AT', digits(r, 16)],
      ['NL', `ABNA${digits(r, 10)}`],
    ] as const);
    const iban = `${country}${ibanCheck(country, bban)}${bban}`;
    return r() < 0.5 ? iban.replace(/(.{4})(?=.)/gu, '$1 ') : iban;
  },
};

const SENTENCES: Record<PiiKind, readonly string[]> = {
  names: ['Please send the contract to {} before Friday.', 'Author: {}', 'I talked to {} about the migration yesterday.', 'Reviewed-by: {}'],
  phones: ['Call me at {} if the deploy fails.', 'phone: {}', 'The on-call number is {}.'],
  addresses: ['Ship the hardware to {}.', 'billing address: {}', 'Our office moved to {} last month.'],
  ips: ['The prod box is at {} (ssh works).', 'connect to {} on port 5432', 'Request from {} was blocked.'],
  cards: ['Test with card {} exp 12/29.', 'card_number={}', 'The customer paid with {}.'],
  ids: ['SSN on file: {}', 'national id {}', 'Her id number is {}.'],
  ibans: ['Wire the refund to {}.', 'iban: {}', 'Account {} was debited twice.'],
};

export function plantedItems(random: () => number, perKind: number): PlantedItem[] {
  const out: PlantedItem[] = [];
  for (const kind of Object.keys(GENERATORS) as PiiKind[]) for (let i = 0; i < perKind; i++) out.push({ kind, value: GENERATORS[kind](random) });
  return out;
}

/** One transcript line carrying `item` in a sentence, in one of six places (Claude Code / Codex × user text / tool result / arguments). */
export function transcriptLine(item: PlantedItem, place: number, random: () => number): string {
  const text = pick(random, SENTENCES[item.kind]).replace('{}', item.value);
  switch (place % 6) {
    case 0:
      return JSON.stringify({ type: 'user', message: { role: 'user', content: text } });
    case 1:
      return JSON.stringify({
        type: 'user',
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Ab', content: `$ cat notes.txt\n${text}\n` }] },
      });
    case 2:
      return JSON.stringify({
        type: 'assistant',
        message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01Cd', name: 'Bash', input: { command: `echo "${text}" >> notes.txt` } }] },
      });
    case 3:
      return JSON.stringify({
        timestamp: '2026-12-01T10:00:00.000Z',
        type: 'response_item',
        payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
      });
    case 4:
      return JSON.stringify({
        timestamp: '2026-12-01T10:00:01.000Z',
        type: 'response_item',
        payload: { type: 'function_call_output', call_id: 'call_Ab12', output: JSON.stringify({ output: `${text}\n`, metadata: { exit_code: 0 } }) },
      });
    default:
      return JSON.stringify({
        timestamp: '2026-12-01T10:00:02.000Z',
        type: 'response_item',
        payload: {
          type: 'function_call',
          name: 'shell',
          arguments: JSON.stringify({ command: ['bash', '-lc', `printf '%s\\n' "${text}"`] }),
          call_id: 'call_Cd34',
        },
      });
  }
}

/** Whether `value` survives in `output` in any written form (raw, JSON-escaped once or twice, digits without separators). */
export function survives(value: string, output: string): boolean {
  const once = JSON.stringify(value).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  if (output.includes(value) || output.includes(once) || output.includes(twice)) return true;
  const compact = value.replace(/[\s-]/gu, '');
  return /^\d{9,}$|^[A-Z]{2}\d{2}[A-Z0-9]+$/u.test(compact) && output.replace(/[\s-]/gu, '').includes(compact);
}
