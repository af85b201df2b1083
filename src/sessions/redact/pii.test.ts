import { describe, expect, it } from 'vitest';
import { luhnValid } from './nordic-ids.js';
import { findPii, PII_KINDS, parsePiiKinds, redactPiiText } from './pii.js';

const kinds = (text: string) => findPii(text).map((s) => [s.kind, text.slice(s.start, s.end)]);

describe('personal data detectors', () => {
  it('finds each kind with its check (Luhn, IBAN mod 97, DNI letter) and replaces it', () => {
    const text = [
      'I talked to John Smith yesterday.',
      'Call +1 415-555-0132, or write to 1600 Pennsylvania Avenue, Springfield, IL 62704.',
      'Card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00, SSN 123-45-6789, DNI 12345678Z.',
      'Hosts 203.0.113.7 and 2001:db8::8a2e:370:7334.',
    ].join('\n');
    expect(kinds(text).map(([k]) => k)).toEqual(['names', 'phones', 'addresses', 'cards', 'ibans', 'ids', 'ids', 'ips', 'ips']);
    expect(redactPiiText(text)).toBe(
      'I talked to <PERSON> yesterday.\nCall <PHONE>, or write to <ADDRESS>.\nCard <CARD>, IBAN <IBAN>, SSN <NATIONAL_ID>, DNI <NATIONAL_ID>.\nHosts <IP> and <IP>.',
    );
  });

  it('leaves numbers and words that fail the checks', () => {
    // Wrong Luhn digit, wrong IBAN check digits, wrong DNI letter, a private address, a version number, a decimal sum, code.
    const text = 'card 4111 1111 1111 1112, DE00 3704 0044 0532 0130 00, 12345678A, 10.0.0.5, v1.2.3.4-beta, 206.835 - 1.015, const userName = getUser();';
    expect(kinds(text)).toEqual([]);
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
  });

  it('finds a given name alone, a middle initial, a name alone in a table cell and a continental address; not words, sections or local addresses', () => {
    expect(redactPiiText('ask Ingrid whether the job runs; Thanks Nkechi, that fixed it.')).toBe(
      'ask <PERSON> whether the job runs; Thanks <PERSON>, that fixed it.',
    );
    expect(redactPiiText('reviewed by Lucia T. Whitaker today')).toBe('reviewed by <PERSON> today');
    expect(redactPiiText('| Peter Kowalski | backend |')).toBe('| <PERSON> | backend |');
    expect(redactPiiText('ship to Lindenweg 4, 10115 Berlin')).toBe('ship to <ADDRESS>');
    // Ungendered given names that are English words, a method named after a person, a section number, link-local and unique-local addresses, a bare negative number.
    const clean = 'Mark the cell; Skip it. Monte Carlo and Shannon entropy. See 4.2.6.1 and 169.254.169.254, fd00:ec2::254, [-2147483648].';
    expect(kinds(clean)).toEqual([]);
  });

  it('takes a link-local address written with its zone when its interface id is more than a small number; not fe80::1%lo0', () => {
    expect(redactPiiText('ping fe80::9c:41d2%eth0 failed')).toBe('ping <IP> failed');
    expect(redactPiiText('fe80::7b:3e05%12 - - [GET /]')).toBe('<IP> - - [GET /]');
    expect(kinds('lo0: inet6 fe80::1%lo0 prefixlen 64, fe80::a%2')).toEqual([]);
  });

  it('leaves special-purpose IPv6 addresses code writes as constants; takes a host inside the NAT64 prefix', () => {
    const clean = 'loopback 0000:0000:0000:0000:0000:0000:0000:0001, any 0:0:0:0:0:0:0:0, mapped ::ffff:0:0, nat64 64:ff9b:: and 64:ff9b:1::';
    expect(kinds(clean)).toEqual([]);
    expect(redactPiiText('via 64:ff9b::cb00:7107 and ::ffff:203.0.113.9')).toBe('via <IP> and <IP>');
  });

  it('reads a 00 international prefix as +; not a hex dump, a time or a longer number', () => {
    expect(redactPiiText('call 0044 20 7946 0958 or 00 44 20 7946 0959 after 6pm')).toBe('call <PHONE> or <PHONE> after 6pm');
    expect(redactPiiText('whatsapp 0049 30 901820')).toBe('whatsapp <PHONE>');
    // A group 00 inside a number already written with +.
    expect(redactPiiText('mobile +33 6 00 83 58 50.')).toBe('mobile <PHONE>.');
    const clean = 'bytes 00 44 20 79 46 12 34 56 ff; at 00:44:20; id 10044 20 7946; v0.0044 20';
    expect(kinds(clean)).toEqual([]);
  });

  it('finds Canadian and Australian addresses; not postcode look-alikes', () => {
    expect(redactPiiText('deliver to: 1787 Rue Sainte-Catherine O, Montréal, QC H3X 6B7.')).toBe('deliver to: <ADDRESS>.');
    expect(redactPiiText('mail it to 220 Yonge Street, Toronto, ON M5B 2H1 today')).toBe('mail it to <ADDRESS> today');
    expect(redactPiiText('office: Level 12, 88 Pitt St, Sydney NSW 2000')).toBe('office: <ADDRESS>');
    expect(redactPiiText('bezorgen: Keizersgracht 600, 1017 DS Amsterdam')).toBe('bezorgen: <ADDRESS>');
    // A code with a letter Canada does not use (D), a province missing, a state and number without a street.
    const clean = 'QC D3X 6B7; the key H3X 6B7 maps to 4; NSW 2000 rows; ON A1B 2C; Table 4, 2048 MB free';
    expect(kinds(clean)).toEqual([]);
  });

  it('finds a name the tagger does not know after a cue: cc, a signature dash, an @ mention, a JSON name field', () => {
    expect(redactPiiText('cc: Oluwaseun Adeyemi')).toBe('cc: <PERSON>');
    expect(redactPiiText('Thanks again,\n— Siobhán Ó Laoghaire')).toBe('Thanks again,\n— <PERSON>');
    expect(redactPiiText('@Tendai Moyo can you review this?')).toBe('@<PERSON> can you review this?');
    expect(redactPiiText('{"author": {"name": "Bongani Dlamini"}}')).toBe('{"author": {"name": "<PERSON>"}}');
    expect(redactPiiText('"text": "{\\"name\\": \\"Bongani Dlamini\\"}"')).toBe('"text": "{\\"name\\": \\"<PERSON>\\"}"');
    // English words after the cues, decorators, a package name, one word alone.
    const clean = [
      'cc: Platform Team',
      '— Build Step',
      '@Injectable() export class Store',
      '@Deprecated Method',
      '{"name": "Build Artifacts", "displayName": "Test Runner"}',
      '{"name": "echolens"}',
      '@Kubernetes',
    ].join('\n');
    expect(kinds(clean)).toEqual([]);
  });

  it('reads --pii', () => {
    expect([...parsePiiKinds(undefined)]).toEqual([...PII_KINDS]);
    expect([...parsePiiKinds('none')]).toEqual([]);
    expect([...parsePiiKinds('names, ibans')]).toEqual(['names', 'ibans']);
    expect(() => parsePiiKinds('names,emails')).toThrow(/unknown kind "emails"/u);
  });
});
