// Personal data in forms the redactor was not built against (issue #40): the seventh held-out
// corpus (pii-heldout7-corpus.ts, drawn from pools by its seed), committed before its first run
// and before the detector code of its pass was read. Its first figure is the held-out one
// (docs/hostile-input.md); the bound below only guards against a regression.
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { describe, expect, it } from 'vitest';
import { luhnValid } from '../../src/sessions/redact/nordic-ids.js';
import { useTempDir } from '../../src/sessions/testing/temp-dir.js';
import { heldOutSurvives } from './pii-heldout-corpus.js';
import { expectHeldOutCorpus } from './pii-heldout-run.js';
import { codiceFiscaleCheck, HELD_OUT7_SEED, heldOut7Records, verhoeffDigit } from './pii-heldout7-corpus.js';
import { seeded } from './size.js';

const tmp = useTempDir('echolens-pii-heldout7-');

describe('sessions redact / verify --pii on a seventh held-out corpus', { timeout: 600_000 }, () => {
  it('plants every item in its record, with valid checks where the form has one', () => {
    const records = heldOut7Records(seeded(HELD_OUT7_SEED));
    expect(records.length).toBeGreaterThanOrEqual(250);
    expect(records.filter((r) => !heldOutSurvives(r.item, r.line)).map((r) => r.item.value)).toEqual([]);
    expect(new Set(records.map((r) => r.tool))).toEqual(new Set(['claude', 'codex']));
    const of = (kind: string) => records.filter((r) => r.item.kind === kind).map((r) => r.item.value);
    expect(of('iban').filter((v) => !isValidIBAN(electronicFormatIBAN(v) ?? ''))).toEqual([]);
    expect(of('card').filter((v) => !luhnValid(v.replace(/\D/gu, '')))).toEqual([]);
    // The Verhoeff digit of the textbook example (236 → 3), so Aadhaar numbers carry a real check.
    expect(verhoeffDigit('236')).toBe('3');
    // and the codice fiscale's check letter of the textbook example RSSMRA85T10A562S.
    expect(codiceFiscaleCheck('RSSMRA85T10A562')).toBe('S');
  });

  it('counts the planted items that survive redact, and those verify does not flag', async () => {
    const records = heldOut7Records(seeded(HELD_OUT7_SEED));
    // Its first run, as written (the held-out figure; `npx tsx tools/pii-heldout-cli.ts` through the
    // built CLI gives the same): 99 of 306 survived redact (32.4%), all 99 unflagged by verify.
    // After the detectors were extended by form (docs/hostile-input.md, eighth pass): 4 of 306, all
    // four given names alone in sentences of other languages (Russian, Turkish, Polish) or one that
    // is also an English word, none flagged by verify. After verify got its own looser name check
    // (ninth pass): the same 4 survive redact, all 4 flagged by verify. The bounds below guard that.
    const outcome = await expectHeldOutCorpus('seventh held-out PII corpus', records, tmp.path, 0.02);
    expect(outcome.unflagged).toEqual([]);
    expect(outcome.survivors.every((i) => records[i]!.item.kind === 'givenName')).toBe(true);
  });

  // The same pools drawn by two other seeds place other items in other templates (ninth pass, first
  // run: 7 and 6 survived redact, none flagged; after it 5 and 5, all flagged).
  for (const seed of [1, 99]) {
    it(`keeps at most 2% surviving redact and none unflagged by verify when drawn with seed ${seed}`, async () => {
      const outcome = await expectHeldOutCorpus(`seventh held-out PII corpus, seed ${seed}`, heldOut7Records(seeded(seed)), tmp.path, 0.02);
      expect(outcome.unflagged).toEqual([]);
    });
  }
});
