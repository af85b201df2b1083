import { describe, expect, it } from 'vitest';
import {
  belgianNationalNumber,
  danishCprChecked,
  finnishHetu,
  frenchNir,
  nordicIdSpans,
  norwegianFnr,
  polishPesel,
  swedishPersonnummer,
} from './nordic-ids.js';
import { redactPiiText } from './pii.js';

const found = (text: string) => nordicIdSpans(text).map((s) => text.slice(s.start, s.end));

describe('national ids with a birth date and a check', () => {
  it('accepts valid numbers and refuses a wrong check or a date that does not exist', () => {
    expect(swedishPersonnummer('811218-9876')).toBe(true);
    expect(swedishPersonnummer('19811218-9876')).toBe(true);
    expect(swedishPersonnummer('811218-9875')).toBe(false);
    expect(finnishHetu('131052-308T')).toBe(true);
    expect(finnishHetu('131052-308U')).toBe(false);
    expect(finnishHetu('311352-308T')).toBe(false);
    expect(polishPesel('44051401359')).toBe(true);
    expect(polishPesel('44051401358')).toBe(false);
    // Check digit right, but 29 February 2002 (month 22 = February in the 2000s) does not exist.
    expect(polishPesel('02222901356')).toBe(false);
    expect(frenchNir('1850578006048 30')).toBe(true);
    expect(frenchNir('1 85 05 78 006 048 30')).toBe(true);
    expect(frenchNir('1850578006048 31')).toBe(false);
    expect(danishCprChecked('070761-0018')).toBe(true);
    expect(danishCprChecked('170175-1054')).toBe(false);
    // Checks computed beside, in python.
    expect(norwegianFnr('14038749685')).toBe(true);
    expect(norwegianFnr('14038749686')).toBe(false);
    expect(norwegianFnr('54038749685')).toBe(false);
    expect(belgianNationalNumber('85.07.30-033.28')).toBe(true);
    expect(belgianNationalNumber('85.07.30-033.29')).toBe(false);
  });

  it('Norwegian fødselsnummer anywhere; a Belgian national number with its dots, or bare after a word naming it', () => {
    expect(found('fødselsnummer 14038749685')).toEqual(['14038749685']);
    expect(found('rijksregisternummer 85.07.30-033.28')).toEqual(['85.07.30-033.28']);
    expect(found('rijksregisternummer: 85073003328')).toEqual(['85073003328']);
    expect(found('row 85073003328 and 14038749686')).toEqual([]);
  });

  it('finds them in text; a CPR number without its check only after a word naming it', () => {
    expect(found('personnummer: 811218-9876, henkilötunnus 131052-308T, PESEL 44051401359 (from the form)')).toEqual([
      '811218-9876',
      '131052-308T',
      '44051401359',
    ]);
    expect(found('CPR-nr. 170175-1054')).toEqual(['170175-1054']);
    expect(found('n° sécu 1 85 05 78 006 048 30 ok')).toEqual(['1 85 05 78 006 048 30']);
    expect(found('personnummer 19811218-9876')).toEqual(['19811218-9876']);
    expect(found('cpr 070761-0018 and 070761-0018')).toEqual(['070761-0018', '070761-0018']);
    expect(redactPiiText('henkilötunnus 131052-308T')).toBe('henkilötunnus <NATIONAL_ID>');
  });

  it('leaves look-alikes: wrong checks, impossible dates, order numbers, longer digit runs, decimals', () => {
    const clean = [
      'order 170175-1054 shipped', // CPR-shaped, no check, no word naming it
      'personnummer 811218-9875', // wrong Luhn digit
      'hetu 131052-308U',
      'PESEL 44051401358',
      'id 440514013590 and 1440514013590', // longer digit runs
      'ratio 44051401359.5',
      'nir 1850578006048 31, 1851378006048 30', // wrong key; month 13
      'CPR-nr. 320175-1054', // day 32
      'commit a1b2c3d, build 20240115-1234', // Luhn holds by chance: the twelve-digit form needs a word naming it
    ].join('\n');
    expect(found(clean)).toEqual([]);
  });
});
