import { describe, expect, it } from 'vitest';
import { findPii } from './pii.js';

const found = (text: string) => findPii(text).map((s) => [s.kind, text.slice(s.start, s.end)]);

// Values here are made up for these tests and appear in no held-out corpus.
describe('personal data told by its context (pii-cued.ts)', () => {
  it('reads an @handle where someone is mentioned, never a doc tag or decorator', () => {
    expect(found('cc @jbrandvold')).toEqual([['names', 'jbrandvold']]);
    expect(found('@olek.w could you rerun it?')).toEqual([['names', 'olek.w']]);
    expect(found('/** @deprecated Do not use. @returns Any value */')).toEqual([]);
    expect(found('@pytest.fixture\ndef client(): ...')).toEqual([]);
  });

  it('reads a phone number in any form after a word naming a phone, and +CC numbers with dots', () => {
    expect(found('sms to 7735550182 failed')).toEqual([['phones', '7735550182']]);
    expect(found('"mobile": "0911-2233445"')).toEqual([['phones', '0911-2233445']]);
    expect(found('call +48.601.223.344')).toEqual([['phones', '+48.601.223.344']]);
    expect(found('timeout 3000000 ms, retries 1234567')).toEqual([]);
  });

  it('reads a CSV cell by its header', () => {
    expect(found('id,contact_name,team\n4,Ilmari Koskenniemi,ops')).toEqual([['names', 'Ilmari Koskenniemi']]);
    expect(found('sku,phone,qty\nA1,0221 448812,3')).toEqual([['phones', '0221 448812']]);
  });

  it('reads names in any script where only a person stands', () => {
    expect(found('Author: 陈美玲 <mei@example.cn>')).toContainEqual(['names', '陈美玲']);
    expect(found('{"owner": "Zhivko Petkov"}')).toEqual([['names', 'Zhivko Petkov']]);
    expect(found('1a2b3c4d (Oyelaran Bamidele 2023-01-05 09:00:00 +0000 7) x()')).toEqual([['names', 'Oyelaran Bamidele']]);
    expect(found('Jorunn deployed it yesterday')).toEqual([['names', 'Jorunn']]);
    expect(found('ask mirela about the export')).toEqual([['names', 'mirela']]);
    expect(found('Regards,\nSigrun')).toEqual([['names', 'Sigrun']]);
    expect(found('попроси Ярослава посмотреть')).toEqual([['names', 'Ярослава']]);
  });

  it('leaves code and words of other languages alone', () => {
    expect(found('const found = items.filter(Boolean);')).toEqual([]);
    expect(found('// subcommands added to this command')).toEqual([]);
    expect(found('{"name": "Grep", "input": {}}')).toEqual([]);
    expect(found('return `Giá trị không hợp lệ trong ` + x;')).toEqual([]);
  });

  it('reads addresses in European order and in other countries’ forms', () => {
    expect(found('moved to Elgin Crescent 17')).toEqual([['addresses', 'Elgin Crescent 17']]);
    expect(found('Drottninggatan 5, 111 51 Stockholm')).toEqual([['addresses', 'Drottninggatan 5, 111 51 Stockholm']]);
    expect(found('〒060-0001 北海道札幌市中央区北1条西2-1')).toHaveLength(1);
    expect(found('ship to ул. Ленина, д. 12, Казань, 420111')).toHaveLength(1);
  });
});
