/**
 * A fourth held-out set of personal data (issue #40), written by hand after the detectors for
 * Nordic and Polish ids, 00 phone prefixes, Canadian and Australian addresses and cued names were
 * added, and run once as written: its figure is reported as measured (docs/sessions.md), and the
 * detectors were not changed after seeing it. Forms that none of the three earlier corpora has.
 * The national ids and IBANs carry valid checks (computed beside, in python, when written).
 */
import type { HeldOutItem } from './pii-heldout-corpus.js';
import { recordWithText } from './pii-heldout-corpus.js';

export const HELD_OUT4_SEED = 27_182_818;

export const HELD_OUT4_ITEMS: ReadonlyArray<{ item: HeldOutItem; text: string }> = [
  { item: { kind: 'name', value: 'Thandiwe Nkosi' }, text: '{"owner": {"full_name": "Thandiwe Nkosi", "id": 7}}' },
  { item: { kind: 'name', value: 'Rangi Parata' }, text: 'cc Rangi Parata on the rollout' },
  { item: { kind: 'name', value: 'Anneliese Brandt-Vogel' }, text: 'Regards,\n-- Anneliese Brandt-Vogel' },
  { item: { kind: 'name', value: 'Mateus Rocha' }, text: 'attendees: Mateus Rocha, Ingrid Solberg' },
  { item: { kind: 'name', value: 'Kwabena Owusu' }, text: 'Per Kwabena Owusu the flag stays off.' },
  { item: { kind: 'givenName', value: 'Leilani' }, text: 'Hi Leilani, the build is green.' },
  { item: { kind: 'phone', value: '00 353 1 234 5678' }, text: 'Dublin desk: 00 353 1 234 5678' },
  { item: { kind: 'phone', value: '0033 1 42 68 53 00' }, text: 'tel 0033 1 42 68 53 00 (reception)' },
  { item: { kind: 'phone', value: '+46 8 123 456 78' }, text: 'ring +46 8 123 456 78 if it fails' },
  { item: { kind: 'phone', value: '(+358) 40 123 4567' }, text: 'mobile (+358) 40 123 4567' },
  { item: { kind: 'phone', value: '+48 512 345 678' }, text: 'kontakt: +48 512 345 678' },
  { item: { kind: 'address', value: 'Unit 4, 17 Smith Street, Fitzroy VIC 3065' }, text: 'ship to Unit 4, 17 Smith Street, Fitzroy VIC 3065' },
  { item: { kind: 'address', value: '350 Sparks St, Ottawa, ON K1R 7S8' }, text: 'Mail the form to 350 Sparks St, Ottawa, ON K1R 7S8.' },
  { item: { kind: 'address', value: 'Flat 2, 14B Abbey Road, London NW8 9AY' }, text: 'billing address: Flat 2, 14B Abbey Road, London NW8 9AY' },
  { item: { kind: 'address', value: 'Mannerheimintie 12 B 5, 00100 Helsinki' }, text: 'osoite: Mannerheimintie 12 B 5, 00100 Helsinki' },
  { item: { kind: 'address', value: 'ul. Marszałkowska 84/92, 00-514 Warszawa' }, text: 'adres: ul. Marszałkowska 84/92, 00-514 Warszawa' },
  { item: { kind: 'nationalId', value: '850709-9805' }, text: 'pnr 850709-9805 verified' },
  { item: { kind: 'nationalId', value: '630415-2231' }, text: '"personal_number": "630415-2231"' },
  { item: { kind: 'nationalId', value: '010594-123W' }, text: 'HETU: 010594-123W' },
  { item: { kind: 'nationalId', value: '92031501232' }, text: 'numer PESEL: 92031501232' },
  { item: { kind: 'nationalId', value: '03251104569' }, text: '{"pesel": "03251104569"}' },
  { item: { kind: 'nationalId', value: '070761-0018' }, text: 'CPR: 070761-0018' },
  { item: { kind: 'iban', value: 'PL61 1090 1014 0000 0712 1981 2874' }, text: 'przelew na PL61 1090 1014 0000 0712 1981 2874' },
  { item: { kind: 'iban', value: 'PT50000201231234567890154' }, text: 'NIB/IBAN PT50000201231234567890154' },
  { item: { kind: 'iban', value: 'SE45 5000 0000 0583 9825 7466' }, text: 'bankgiro fallback SE45 5000 0000 0583 9825 7466' },
  { item: { kind: 'iban', value: 'FI21 1234 5600 0007 85' }, text: 'tilinumero FI21 1234 5600 0007 85' },
  { item: { kind: 'ipv6', value: '2606:4700:4700::1111' }, text: 'curl -6 https://[2606:4700:4700::1111]:443/' },
  { item: { kind: 'ipv6', value: '2001:4860:4860::8888' }, text: 'resolver 2001:4860:4860::8888 timed out' },
];

export const HELD_OUT4_KINDS = [...new Set(HELD_OUT4_ITEMS.map((i) => i.item.kind))];

export function heldOut4Records(random: () => number): Array<{ item: HeldOutItem; tool: 'claude' | 'codex'; line: string }> {
  return HELD_OUT4_ITEMS.map(({ item, text }, i) => ({ item, ...recordWithText(text, i + 1, i + 1, random) }));
}
