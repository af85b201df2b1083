/**
 * A fifth held-out set of personal data (issue #40), written by hand after the detectors' last
 * change (names as runs of proper nouns that are not English words, phones written with a country
 * code, Finnish and Polish addresses) and before running them on it; run once as written, its
 * first figure is the one reported (docs/sessions.md), whatever it was. Forms none of the four
 * earlier corpora has: names after other verbs and in a TODO, a `displayName` field, Irish and
 * Nordic spellings; Japanese, German, Mexican, Nigerian, Singaporean and Australian numbers (one in
 * national form); Swiss, Norwegian, Portuguese and Irish addresses and two US ones; Amex and
 * Discover cards; Norwegian and Belgian national numbers; Dutch, Belgian, Norwegian and Irish
 * IBANs. Checks (Luhn, mod 97, mod 11) computed beside, in python, when written.
 */
import type { HeldOutItem } from './pii-heldout-corpus.js';
import { recordWithText } from './pii-heldout-corpus.js';

export const HELD_OUT5_SEED = 16_180_339;

export const HELD_OUT5_ITEMS: ReadonlyArray<{ item: HeldOutItem; text: string }> = [
  { item: { kind: 'name', value: 'Oluwaseun Adebayo' }, text: '{"reporter": {"displayName": "Oluwaseun Adebayo", "active": true}}' },
  { item: { kind: 'name', value: 'Siobhán Ní Bhriain' }, text: 'Thanks to Siobhán Ní Bhriain for the review.' },
  { item: { kind: 'name', value: 'Dmitri Volkov' }, text: 'pair with Dmitri Volkov tomorrow on the migration' },
  { item: { kind: 'name', value: 'Ayesha Siddiqui' }, text: 'Owner of the pager this week is Ayesha Siddiqui.' },
  { item: { kind: 'name', value: 'Joaquín Herrera-Ruiz' }, text: 'git blame says Joaquín Herrera-Ruiz wrote this in 2019' },
  { item: { kind: 'name', value: 'Priyanka Raghunathan' }, text: '# TODO(Priyanka Raghunathan): drop the shim after the release' },
  { item: { kind: 'name', value: 'Björn Åkesson' }, text: 'Meeting notes: attendees were Björn Åkesson and the infra team' },
  { item: { kind: 'name', value: 'Tatsuya Morimoto' }, text: 'email from Tatsuya Morimoto: the vendor fixed it' },
  { item: { kind: 'givenName', value: 'Oksana' }, text: 'Morning Oksana, the deploy finished.' },
  { item: { kind: 'givenName', value: 'Ravindra' }, text: 'I asked Ravindra to rerun the job' },
  { item: { kind: 'phone', value: '+81 3-1234-5678' }, text: 'Tokyo office +81 3-1234-5678' },
  { item: { kind: 'phone', value: '+49 30 901820' }, text: 'Rückruf unter +49 30 901820' },
  { item: { kind: 'phone', value: '+52 55 1234 5678' }, text: 'cel +52 55 1234 5678' },
  { item: { kind: 'phone', value: '+234 803 123 4567' }, text: 'WhatsApp +234 803 123 4567' },
  { item: { kind: 'phone', value: '0412 345 678' }, text: 'call me on 0412 345 678 after five' },
  { item: { kind: 'phone', value: '+65 6123 4567' }, text: 'SG line: +65 6123 4567' },
  { item: { kind: 'address', value: '1600 Pennsylvania Ave NW, Washington, DC 20500' }, text: 'send it to 1600 Pennsylvania Ave NW, Washington, DC 20500' },
  { item: { kind: 'address', value: 'Bahnhofstrasse 21, 8001 Zürich' }, text: 'Lieferadresse: Bahnhofstrasse 21, 8001 Zürich' },
  { item: { kind: 'address', value: 'Karl Johans gate 22, 0159 Oslo' }, text: 'adresse: Karl Johans gate 22, 0159 Oslo' },
  { item: { kind: 'address', value: '12 Merrion Square, Dublin 2, D02 X285' }, text: 'registered office 12 Merrion Square, Dublin 2, D02 X285' },
  { item: { kind: 'address', value: 'Rua Augusta 274, 1100-053 Lisboa' }, text: 'morada: Rua Augusta 274, 1100-053 Lisboa' },
  { item: { kind: 'address', value: '742 Evergreen Terrace, Springfield, OR 97403' }, text: 'home: 742 Evergreen Terrace, Springfield, OR 97403' },
  { item: { kind: 'ipv6', value: '2a00:1450:4001:82b::200e' }, text: 'ping6 2a00:1450:4001:82b::200e' },
  { item: { kind: 'ipv6', value: '2001:0db8:85a3:0000:0000:8a2e:0370:7334' }, text: 'client=2001:0db8:85a3:0000:0000:8a2e:0370:7334 denied' },
  { item: { kind: 'ipv4', value: '203.0.113.77' }, text: 'blocked 203.0.113.77 after 5 failures' },
  { item: { kind: 'ipv4', value: '81.2.69.160' }, text: 'X-Forwarded-For: 81.2.69.160' },
  { item: { kind: 'card', value: '3714 496353 98431' }, text: 'amex 3714 496353 98431 exp 09/27' },
  { item: { kind: 'card', value: '6011000990139424' }, text: '"pan": "6011000990139424"' },
  { item: { kind: 'nationalId', value: '512-44-9012' }, text: 'applicant ssn 512-44-9012' },
  { item: { kind: 'nationalId', value: 'AB123456C' }, text: 'NI number AB123456C' },
  { item: { kind: 'nationalId', value: '14038749685' }, text: 'fødselsnummer 14038749685' },
  { item: { kind: 'nationalId', value: '85.07.30-033.28' }, text: 'rijksregisternummer 85.07.30-033.28' },
  { item: { kind: 'iban', value: 'NL39 RABO 0300 0652 64' }, text: 'rekening NL39 RABO 0300 0652 64' },
  { item: { kind: 'iban', value: 'BE68 5390 0754 7034' }, text: 'IBAN: BE68 5390 0754 7034' },
  { item: { kind: 'iban', value: 'NO19 1503 4212 349' }, text: 'kontonummer NO19 1503 4212 349' },
  { item: { kind: 'iban', value: 'IE29 AIBK 9311 5212 3456 78' }, text: 'pay to IE29 AIBK 9311 5212 3456 78 by Friday' },
  { item: { kind: 'email', value: 'ana.lucia+billing@correo.example.mx' }, text: 'cc ana.lucia+billing@correo.example.mx' },
  { item: { kind: 'email', value: 'kofi.mensah@mail.example.gh' }, text: 'From: kofi.mensah@mail.example.gh' },
];

export function heldOut5Records(random: () => number): Array<{ item: HeldOutItem; tool: 'claude' | 'codex'; line: string }> {
  return HELD_OUT5_ITEMS.map(({ item, text }, i) => ({ item, ...recordWithText(text, i + 1, i + 1, random) }));
}
