import { describe, expect, it } from 'vitest';
import { nationalPhoneSpans } from './national-phones.js';
import { findPii } from './pii.js';
import { aadhaarValid, cpfValid, steuerIdValid, verhoeffValid, worldIdSpans } from './world-ids.js';

const found = (text: string, spans: Array<{ start: number; end: number }>) => spans.map((s) => text.slice(s.start, s.end));

describe('national ids outside the date-based ones', () => {
  it('checks CPF, Aadhaar (Verhoeff) and Steuer-ID digits, refusing one wrong digit', () => {
    // Check digits computed beside (the CPF in python; 236-3 is the usual Verhoeff example), not by these functions.
    expect(cpfValid('111.444.777-35')).toBe(true);
    expect(cpfValid('111.444.777-36')).toBe(false);
    expect(cpfValid('111.111.111-11')).toBe(false);
    expect(verhoeffValid('2363')).toBe(true);
    expect(verhoeffValid('2364')).toBe(false);
    expect(aadhaarValid('1234 5678 9012')).toBe(false); // a leading 1 is never issued
    expect(steuerIdValid('86095743182')).toBe(true);
    expect(steuerIdValid('86095743183')).toBe(false);
    expect(steuerIdValid('12345678903')).toBe(false); // ten different digits: no repeated one
  });

  it('takes an ungrouped Aadhaar number after UID when its Verhoeff digit holds; not a wrong digit, nor twelve digits without the word', () => {
    // Check digits computed beside in python (Verhoeff tables), not by these functions.
    const take = (text: string) => found(text, worldIdSpans(text));
    expect(take('UID 735190246818 on file')).toEqual(['735190246818']);
    expect(take('uidai no. 5200 8461 9375')).toEqual(['5200 8461 9375']);
    expect(take('UID: 520084619375')).toEqual(['520084619375']);
    expect(take('UID 735190246817 on file')).toEqual([]);
    expect(take('order 735190246818 shipped')).toEqual([]);
    expect(take('uid=1000 gid=1000')).toEqual([]);
  });

  it('takes a number after a word naming an id, in any country, and leaves dates, short numbers and ordinary words', () => {
    expect(found('Social Insurance Number: 130-452-899', worldIdSpans('Social Insurance Number: 130-452-899'))).toEqual(['130-452-899']);
    expect(found('TFN 123 456 782', worldIdSpans('TFN 123 456 782'))).toEqual(['123 456 782']);
    expect(found('national insurance QQ 12 34 56 C', worldIdSpans('national insurance QQ 12 34 56 C'))).toEqual(['QQ 12 34 56 C']);
    for (const clean of ['the pan 12345678', 'sin(x) = 0.25', 'tax id 2024-01-15', 'order ID 123456789', 'passport no. 12', 'ssn 000000000']) {
      expect(worldIdSpans(clean)).toEqual([]);
    }
  });
});

describe('phone numbers in national form', () => {
  it('reads trunk-0 and bracketed forms of several countries, and a US-shaped number', () => {
    for (const [text, value] of [
      ['call 0412 345 678 later', '0412 345 678'],
      ['Tél. 01 42 68 53 00', '01 42 68 53 00'],
      ['celular (11) 98765-4321', '(11) 98765-4321'],
      ['keitai 090-1234-5678', '090-1234-5678'],
      ['her number is 555-867-5309', '555-867-5309'],
    ] as const) {
      expect(found(text, nationalPhoneSpans(text))).toEqual([value]);
    }
  });

  it('leaves dates, versions, hex offsets and bare digit runs', () => {
    for (const clean of ['released 2024-06-12', 'v0.12.3', 'offset 0000 0010 0020', 'id 0412345678', 'range 01-12', 'at 03:12:45', '0 0 0 0 0 0']) {
      expect(nationalPhoneSpans(clean)).toEqual([]);
    }
  });
});

describe('names without a tagger cue', () => {
  it('finds a name in a code annotation, after a greeting, before a verb, and after a lower-case cue', () => {
    const names = (text: string) => findPii(text, new Set(['names'])).map((s) => text.slice(s.start, s.end));
    expect(names('// TODO(oksana): remove the shim')).toEqual(['oksana']);
    expect(names('Morning Oksana, the deploy finished.')).toEqual(['Oksana']);
    expect(names('Oluwadamilare Adeyemi opened this issue')).toEqual(['Oluwadamilare Adeyemi']);
    expect(names('account holder: jürgen baumgartner')).toEqual(['jürgen baumgartner']);
  });

  it('leaves annotations of a topic, words of another language and places', () => {
    const names = (text: string) => findPii(text, new Set(['names']));
    for (const clean of [
      '// TODO(cleanup): merge these',
      'message: "Ungültige Eingabe: erwartet Zahl"',
      'the Indian Ocean route',
      'per Section 4, the cache stays',
    ]) {
      expect(names(clean)).toEqual([]);
    }
  });
});
