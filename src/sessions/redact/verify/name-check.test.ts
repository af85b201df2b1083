import { describe, expect, it } from 'vitest';
import { findLooseNames, folded, inGivenNames, loadGivenNames } from './name-check.js';

const names = await loadGivenNames();
const found = (text: string) => findLooseNames(text, names).map((h) => text.slice(h.start, h.end));

describe('the verifier’s loose name check', () => {
  it('folds marks and letters NFD keeps, and matches a listed name as written or by its ASCII letters only', () => {
    expect(folded('Łucja Øye')).toBe('lucja oye');
    expect(inGivenNames('Zeynep', names)).toBe(true);
    expect(inGivenNames('josé', names)).toBe(true);
    // A word that is not anyone's given name in any locale.
    expect(inGivenNames('Retries', names)).toBe(false);
  });

  it('flags a listed given name opening or inside a sentence, in any script, without a cue', () => {
    expect(found('+Ольга сказала, что тесты прошли')).toEqual(['Ольга']);
    expect(found('Agnieszka naprawiła build wczoraj')).toEqual(['Agnieszka']);
    expect(found('Zeynep dün testleri düzeltti')).toEqual(['Zeynep']);
    expect(found('Mihai wants this behind a flag')).toEqual(['Mihai']);
  });

  it('flags an unlisted capitalised word, or a listed lower-case one, where only a person stands', () => {
    expect(found('waiting for Tahu to review')).toEqual(['Tahu']);
    expect(found('told Kaimana the build is green')).toEqual(['Kaimana']);
    expect(found('josé deployed it')).toEqual(['josé']);
  });

  it('leaves eponyms, English words, assistants, two-word titles and names inside identifiers', () => {
    for (const clean of [
      'Monte Carlo with at least 20 draws',
      'the Jensen–Shannon divergence',
      'Shannon entropy in bits',
      'Max retries reached',
      'told Claude the plan',
      'Frequently asked questions',
      'Helena unavailable.',
      'retry with Mihai-style backoff',
      'const mihaiCount = users.Mihai_id;',
    ]) {
      expect(found(clean)).toEqual([]);
    }
  });
});
