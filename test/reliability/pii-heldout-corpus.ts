/**
 * A held-out corpus of personal data for `sessions redact --pii` (issue #40). It shares nothing
 * with the lists the redactor was developed against (pii-corpus.ts, pii.test.ts): other given
 * names and surnames (many a tagger has never seen), a given name written alone, other streets,
 * cities and national address formats, other phone formats and countries, other IBAN countries,
 * ids written without separators, e-mail addresses, and its own seed. Each item sits in text
 * as people and tools write it, inside whole transcript records with their real envelopes:
 * Claude Code (`user` text and text blocks, `tool_result` strings and block lists, `tool_use`
 * inputs of Bash, Write and Edit) and Codex rollouts (`response_item` messages, `function_call`
 * arguments — JSON inside JSON — `function_call_output`, `custom_tool_call` patches and
 * `event_msg` user messages), one item per record so that a survivor is known by its line.
 */

export type HeldOutKind = 'name' | 'givenName' | 'phone' | 'address' | 'ipv6' | 'ipv4' | 'card' | 'nationalId' | 'iban' | 'email';

export interface HeldOutItem {
  /** 'handle' (an @mention) is planted only by corpus 7, so the generators here have no kind for it. */
  kind: HeldOutKind | 'handle';
  value: string;
}

export const HELD_OUT_SEED = 7_340_411;

const GIVEN = [
  'Aisha',
  'Mateo',
  'Priya',
  'Dmitri',
  'Chloé',
  'Kwame',
  'Yuki',
  'Sven',
  'Amara',
  'Rafael',
  'Nadia',
  'Oskar',
  'Leilani',
  'Bogdan',
  'Inès',
  'Tariq',
  'Greta',
  'Kenji',
  'Zanele',
  'Finnegan',
  'Esperanza',
  'Rohan',
  'Margit',
  'Thandiwe',
  'Caoimhe',
  'Valentina',
  'Joaquín',
  'Elif',
  'Mireille',
  'Siddharth',
];
const SURNAMES = [
  'Okafor',
  'Lindqvist',
  'Nakamura',
  'Moreau',
  'Kowalczyk',
  'Haddad',
  'Fernández',
  'Baptiste',
  'Novak',
  'Abernathy',
  'Whitfield',
  'Sørensen',
  'Delgado',
  'Mbeki',
  "O'Connor",
  'Vasquez',
  'Kaplan',
  'Ivanova',
  'Duarte',
  'Achterberg',
  'Papadopoulos',
  'Yılmaz',
  'Castellano',
  'Brennan',
  'Adeyemi',
];
const US_STREETS = ['Willow Creek', 'Harbor View', 'Magnolia', 'Chestnut', 'Riverside', 'Birchwood', 'Old Mill', 'Juniper'];
const US_TYPES = ['Court', 'Place', 'Terrace', 'Parkway', 'Way', 'Street', 'Drive', 'Circle'];
const US_CITIES = ['Burlington', 'Tucson', 'Savannah', 'Boise', 'Fargo', 'Ithaca', 'Bend'];
const US_STATES = ['VT', 'AZ', 'GA', 'ID', 'ND', 'NY', 'OR'];
const UK_STREETS = ['Baker Street', 'Mill Lane', 'Station Road', 'Church Road', 'Victoria Road'];
const UK_TOWNS: ReadonlyArray<readonly [string, string]> = [
  ['London', 'NW1 6XE'],
  ['Leeds', 'LS1 4AP'],
  ['Bristol', 'BS8 1TH'],
  ['Glasgow', 'G12 8QQ'],
];
const FR_STREETS = ['rue des Lilas', 'avenue Victor Hugo', 'boulevard Voltaire', 'rue de la Paix'];
const FR_CITIES: ReadonlyArray<readonly [string, string]> = [
  ['75011', 'Paris'],
  ['69002', 'Lyon'],
  ['33000', 'Bordeaux'],
];
const DE_STREETS = ['Goethestraße', 'Schillerstraße', 'Rosenweg', 'Kirchgasse', 'Am Ring'];
const DE_CITIES: ReadonlyArray<readonly [string, string]> = [
  ['60313', 'Frankfurt'],
  ['70173', 'Stuttgart'],
  ['04109', 'Leipzig'],
];

const digits = (r: () => number, n: number) => Array.from({ length: n }, () => Math.floor(r() * 10)).join('');
const pick = <T>(r: () => number, list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;
const int = (r: () => number, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

/** Luhn check digit for `body` (written here, not imported from the redactor). */
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

/** ISO 13616 mod-97 check digits. */
function ibanCheck(country: string, bban: string): string {
  const numeric = `${bban}${country}00`.replace(/[A-Z]/gu, (c) => String(c.charCodeAt(0) - 55));
  let rest = 0;
  for (const ch of numeric) rest = (rest * 10 + Number(ch)) % 97;
  return String(98 - rest).padStart(2, '0');
}

/** French RIB key of a bank, branch and account number (so the IBAN passes the national check too). */
function ribKey(bank: string, branch: string, account: string): string {
  return String(97n - ((89n * BigInt(bank) + 15n * BigInt(branch) + 3n * BigInt(account)) % 97n)).padStart(2, '0');
}

const GENERATORS: Record<HeldOutKind, (r: () => number) => string> = {
  name: (r) => (r() < 0.2 ? `${pick(r, GIVEN)} ${pick(r, ['J.', 'A.', 'M.'])} ${pick(r, SURNAMES)}` : `${pick(r, GIVEN)} ${pick(r, SURNAMES)}`),
  givenName: (r) => pick(r, GIVEN),
  phone: (r) =>
    pick(r, [
      () => `${pick(r, ['802', '520', '912', '208'])}.555.${digits(r, 4)}`,
      () => `+1 (${pick(r, ['646', '702', '971'])}) 555-${digits(r, 4)}`,
      () => `+44 7${pick(r, ['911', '825', '400'])} ${digits(r, 6)}`,
      () => `+49 151 ${digits(r, 8)}`,
      () => `+61 2 ${int(r, 8000, 9999)} ${digits(r, 4)}`,
      () => `+81 3-${int(r, 1000, 9999)}-${digits(r, 4)}`,
      () => `+34 6${digits(r, 2)} ${digits(r, 3)} ${digits(r, 3)}`,
    ])(),
  address: (r) =>
    pick(r, [
      () => `${int(r, 10, 9899)} ${pick(r, US_STREETS)} ${pick(r, US_TYPES)}, ${pick(r, US_CITIES)}, ${pick(r, US_STATES)} ${digits(r, 5)}`,
      () => `${int(r, 2, 240)} ${pick(r, US_STREETS)} ${pick(r, US_TYPES)}, Apt ${int(r, 1, 40)}`,
      () => {
        const [town, postcode] = pick(r, UK_TOWNS);
        return `${int(r, 1, 199)} ${pick(r, UK_STREETS)}, ${town} ${postcode}`;
      },
      () => {
        const [code, city] = pick(r, FR_CITIES);
        return `${int(r, 1, 90)} ${pick(r, FR_STREETS)}, ${code} ${city}`;
      },
      () => {
        const [code, city] = pick(r, DE_CITIES);
        return `${pick(r, DE_STREETS)} ${int(r, 1, 80)}, ${code} ${city}`;
      },
    ])(),
  ipv6: (r) => {
    const group = () => int(r, 1, 0xffff).toString(16);
    return pick(r, [
      () => `2a0${int(r, 0, 9)}:${group()}:${group()}:${group()}::${group()}`,
      () => `2606:4700:${group()}::${group()}`,
      () => `2${int(r, 400, 999)}:${group()}:${group()}:${group()}:${group()}:${group()}:${group()}:${group()}`,
    ])();
  },
  ipv4: (r) => `${pick(r, [45, 62, 93, 104, 185, 212])}.${int(r, 1, 254)}.${int(r, 1, 254)}.${int(r, 1, 254)}`,
  card: (r) => {
    const prefix = pick(r, ['4', '2221', '2720', '34', '65', '5425']);
    const length = prefix === '34' ? 15 : 16;
    const body = `${prefix}${digits(r, length - prefix.length - 1)}`;
    const card = `${body}${luhnDigit(body)}`;
    const style = r();
    if (length === 15) return style < 0.5 ? card : `${card.slice(0, 4)} ${card.slice(4, 10)} ${card.slice(10)}`;
    return style < 0.33 ? card : card.replace(/(\d{4})(?=\d)/gu, style < 0.66 ? '$1-' : '$1 ');
  },
  nationalId: (r) =>
    pick(r, [
      () => `${int(r, 100, 665)}-${int(r, 10, 99)}-${int(r, 1000, 9999)}`,
      () => {
        const n = int(r, 10_000_000, 99_999_999);
        return `${n}-${'TRWAGMYFPDXBNJZSQVHLCKE'[n % 23]}`;
      },
      () => `${pick(r, ['JG', 'NH', 'SP', 'WL'])}${digits(r, 6)}${pick(r, ['A', 'B', 'C', 'D'])}`,
    ])(),
  iban: (r) => {
    const [country, bban] = pick(r, [
      () => {
        const bank = digits(r, 5);
        const branch = digits(r, 5);
        const account = digits(r, 11);
        return ['FR', `${bank}${branch}${account}${ribKey(bank, branch, account)}`] as const;
      },
      () => ['IT', `X${digits(r, 10)}${digits(r, 12)}`] as const,
      () =>
        [
          'BE',
          (() => {
            const base = digits(r, 10);
            const check = String(Number(BigInt(base) % 97n) || 97).padStart(2, '0');
            return `${base}${check}`;
          })(),
        ] as const,
      () => ['CH', `${digits(r, 5)}${digits(r, 12)}`] as const,
    ])();
    const iban = `${country}${ibanCheck(country, bban)}${bban}`;
    return r() < 0.5 ? iban.replace(/(.{4})(?=.)/gu, '$1 ') : iban;
  },
  email: (r) =>
    `${pick(r, GIVEN)
      .normalize('NFD')
      .replace(/[^A-Za-z]/gu, '')
      .toLowerCase()}.${pick(r, ['okafor', 'lindqvist', 'moreau', 'novak', 'kaplan'])}${int(r, 1, 99)}@${pick(r, ['fastmail.com', 'proton.me', 'acme-logistics.io', 'uni-leipzig.de'])}`,
};

const TEMPLATES: Record<HeldOutItem['kind'], readonly string[]> = {
  name: [
    'can you add {} as a co-author on the release notes',
    '| {} | backend | on leave until March |',
    'commit 3f9a1c2\nAuthor: {} <dev@example.org>\n\n    fix flaky retry test',
    'Hi team, {} here — the staging DB is back up.',
  ],
  givenName: [
    'ask {} whether the cron job still runs on Sundays',
    '{} said the migration broke the invoices table',
    'Thanks {}, that fixed it.',
    'ping {} about the failing build before lunch',
  ],
  phone: ['support line {} (weekdays)', 'tel={}', 'If nobody answers, text {} and mention the ticket.', 'contact_phone: "{}"'],
  address: ['shipping_address: {}', 'Deliver the spare laptop to {} please.', 'The venue is {}, second floor.', 'address,{}'],
  ipv6: ['curl -6 http://[{}]:8080/healthz timed out', 'client_ip={} status=403', 'AAAA record points at {} now'],
  ipv4: ['ssh deploy@{} -p 2222', 'blocked {} after 40 failed logins', 'upstream {}:443 refused the connection'],
  card: ['charge failed for card {} (expired)', 'pan: {}', 'the customer read out {} over the phone'],
  nationalId: ['tax_id={}', 'Her social security number is {}.', 'DNI/NIE del cliente: {}', 'NI number {} on the payslip'],
  iban: ['payout to IBAN {} failed', 'beneficiary_account: {}', 'Please refund {} by Friday.'],
  email: ['reply-to: {}', 'forward the logs to {} when done', 'git config user.email "{}"'],
  handle: ['cc {}', 'thanks {} for the review'],
};

export const HELD_OUT_KINDS = Object.keys(GENERATORS) as HeldOutKind[];

/** `perKind` items of every kind (names: `perKind` full names and `perKind` given names alone). */
export function heldOutItems(random: () => number, perKind: number): HeldOutItem[] {
  const out: HeldOutItem[] = [];
  for (const kind of HELD_OUT_KINDS) for (let i = 0; i < perKind; i++) out.push({ kind, value: GENERATORS[kind](random) });
  return out;
}

/** Ids of the records, derived from the line number (a transcript's uuids are unique per line). */
const uuid = (n: number) =>
  `7c1e${String(n).padStart(4, '0')}-3b2a-4d6f-9e10-${String(n * 7919)
    .padStart(12, '0')
    .slice(-12)}`;
const at = (n: number) => new Date(Date.UTC(2026, 10, 30, 9, 0, 0) + n * 4_000).toISOString();

/** The first line of each transcript (its own metadata, no planted data). */
export function transcriptHeader(tool: 'claude' | 'codex'): string {
  if (tool === 'claude') return JSON.stringify({ type: 'summary', summary: 'Fix the billing export', leafUuid: uuid(9999) });
  return JSON.stringify({
    timestamp: at(0),
    type: 'session_meta',
    payload: {
      id: '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
      timestamp: at(0),
      cwd: '/home/dev/billing',
      originator: 'codex_cli_rs',
      cli_version: '0.135.0',
      instructions: null,
      source: 'cli',
      model_provider: 'openai',
      git: { commit_hash: '5d41402abc4b2a76b9719d911017c592', branch: 'main', repository_url: 'git@github.com:acme/billing.git' },
    },
  });
}

/**
 * One record carrying `item` in a sentence, at place `place % 11`: places 0–5 are Claude Code
 * records, 6–10 Codex rollout records. `n` numbers the record (uuids, timestamps, call ids).
 */
export function heldOutRecord(item: HeldOutItem, place: number, n: number, random: () => number): { tool: 'claude' | 'codex'; line: string } {
  return recordWithText(pick(random, TEMPLATES[item.kind]).replace('{}', item.value), place, n, random);
}

/** One transcript record carrying `text`, at place `place % 11` (heldOutRecord). */
export function recordWithText(text: string, place: number, n: number, random: () => number): { tool: 'claude' | 'codex'; line: string } {
  const envelope = {
    parentUuid: uuid(n - 1),
    isSidechain: false,
    userType: 'external',
    cwd: '/home/dev/billing',
    sessionId: '5b0c2d1e-8f3a-4b6c-9d7e-1a2b3c4d5e6f',
    version: '2.1.152',
    gitBranch: 'main',
  };
  const assistant = (content: unknown[]) => ({
    ...envelope,
    message: {
      id: `msg_01${String(n).padStart(6, '0')}Hk`,
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content,
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 80, cache_creation_input_tokens: 0, cache_read_input_tokens: 20_480 },
    },
    requestId: `req_011C${String(n).padStart(6, '0')}`,
    type: 'assistant',
    uuid: uuid(n),
    timestamp: at(n),
  });
  const user = (content: unknown, extra: object = {}) => ({
    ...envelope,
    type: 'user',
    message: { role: 'user', content },
    uuid: uuid(n),
    timestamp: at(n),
    ...extra,
  });
  const toolId = `toolu_01${String(n).padStart(6, '0')}Qz`;
  const callId = `call_${String(n).padStart(6, '0')}Xy`;
  const codex = (payload: object) => JSON.stringify({ timestamp: at(n), type: 'response_item', payload });
  switch (place % 11) {
    case 0:
      return { tool: 'claude', line: JSON.stringify(user(text)) };
    case 1:
      return { tool: 'claude', line: JSON.stringify(user([{ type: 'text', text }])) };
    case 2:
      return {
        tool: 'claude',
        line: JSON.stringify(
          user([{ type: 'tool_result', tool_use_id: toolId, content: `     1\t# contacts\n     2\t${text}\n     3\t` }], {
            toolUseResult: { type: 'text', file: { filePath: '/home/dev/billing/NOTES.md', numLines: 3 } },
          }),
        ),
      };
    case 3:
      return {
        tool: 'claude',
        line: JSON.stringify(user([{ type: 'tool_result', tool_use_id: toolId, content: [{ type: 'text', text: `grep output:\n${text}` }], is_error: false }])),
      };
    case 4:
      return {
        tool: 'claude',
        line: JSON.stringify(
          assistant([
            { type: 'tool_use', id: toolId, name: 'Bash', input: { command: `grep -rn '${text.replace(/'/gu, '')}' logs/`, description: 'Search the logs' } },
          ]),
        ),
      };
    case 5:
      return {
        tool: 'claude',
        line: JSON.stringify(
          random() < 0.5
            ? assistant([
                { type: 'tool_use', id: toolId, name: 'Write', input: { file_path: '/home/dev/billing/fixtures/customer.txt', content: `${text}\n` } },
              ])
            : assistant([
                {
                  type: 'tool_use',
                  id: toolId,
                  name: 'Edit',
                  input: { file_path: '/home/dev/billing/README.md', old_string: 'TBD', new_string: text, replace_all: false },
                },
              ]),
        ),
      };
    case 6:
      return { tool: 'codex', line: codex({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }) };
    case 7:
      return {
        tool: 'codex',
        line: codex({
          type: 'function_call',
          name: 'shell',
          arguments: JSON.stringify({
            command: ['bash', '-lc', `echo '${text.replace(/'/gu, '')}' >> notes.txt`],
            workdir: '/home/dev/billing',
            timeout_ms: 10_000,
          }),
          call_id: callId,
        }),
      };
    case 8:
      return {
        tool: 'codex',
        line: codex({
          type: 'function_call_output',
          call_id: callId,
          output:
            random() < 0.5
              ? JSON.stringify({ output: `${text}\n`, metadata: { exit_code: 0, duration_seconds: 0.1 } })
              : `Exit code: 0\nWall time: 0.1 seconds\nOutput:\n${text}\n`,
        }),
      };
    case 9:
      return {
        tool: 'codex',
        line: codex({
          type: 'custom_tool_call',
          status: 'completed',
          call_id: callId,
          name: 'apply_patch',
          input: `*** Begin Patch\n*** Update File: docs/contacts.md\n@@\n-TBD\n+${text}\n*** End Patch`,
        }),
      };
    default:
      return { tool: 'codex', line: JSON.stringify({ timestamp: at(n), type: 'event_msg', payload: { type: 'user_message', message: text, images: [] } }) };
  }
}

/** Every written form of `value` in `output`: raw, JSON-escaped once or twice, digits without separators; a name as a whole word. */
export function heldOutSurvives(item: HeldOutItem, output: string): boolean {
  const forms = [item.value, JSON.stringify(item.value).slice(1, -1), JSON.stringify(JSON.stringify(item.value).slice(1, -1)).slice(1, -1)];
  // A word test reads the line with its JSON escapes of newlines and tabs undone: in `\nAnna` or
  // `\tAnna` the letter of the escape would otherwise hide the name's word boundary.
  const words = output.replace(/\\+[nrt]/gu, ' ');
  if (item.kind === 'name' || item.kind === 'givenName') {
    // A name survives when any of its words does (a surname alone still names the person), as a whole word.
    const parts = item.value.split(' ').filter((w) => !/^[A-Z]\.$/u.test(w));
    return parts.some((w) => new RegExp(`(?<![\\p{L}])${w.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')}(?![\\p{L}])`, 'u').test(words));
  }
  if (item.kind === 'handle') {
    // An @handle survives when its name part is still there as a whole token, with or without the @.
    const body = item.value.replace(/^@/u, '').replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
    return new RegExp(`(?<![\\p{L}\\p{N}_])${body}(?![\\p{L}\\p{N}_])`, 'u').test(words);
  }
  if (forms.some((f) => output.includes(f))) return true;
  const compact = item.value.replace(/[\s().-]/gu, '');
  return /^\+?\d{8,}$|^[A-Z]{2}\d{2}[A-Z0-9]+$/u.test(compact) && output.replace(/[\s().-]/gu, '').includes(compact);
}
