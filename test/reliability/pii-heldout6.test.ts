// Personal data in forms the redactor was not built against (issue #40): the sixth held-out
// corpus (pii-heldout6-corpus.ts, 255 items), committed before its first run. Its first figure
// is the held-out one (docs/hostile-input.md); the bound below only guards against a regression.
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { describe, expect, it } from 'vitest';
import { luhnValid } from '../../src/sessions/redact/nordic-ids.js';
import { useTempDir } from '../../src/sessions/testing/temp-dir.js';
import { expectHeldOutCorpus } from './pii-heldout-run.js';
import { HELD_OUT6_SEED, heldOut6Records } from './pii-heldout6-corpus.js';
import { seeded } from './size.js';

const tmp = useTempDir('echolens-pii-heldout6-');

describe('sessions redact / verify --pii on a sixth held-out corpus', { timeout: 600_000 }, () => {
  it('plants IBANs that pass mod 97 and their national checks, and cards that pass Luhn', () => {
    const records = heldOut6Records(seeded(HELD_OUT6_SEED));
    const of = (kind: string) => records.filter((r) => r.item.kind === kind).map((r) => r.item.value);
    expect(of('iban').length).toBeGreaterThanOrEqual(25);
    expect(of('iban').filter((v) => !isValidIBAN(electronicFormatIBAN(v) ?? ''))).toEqual([]);
    expect(of('card').filter((v) => !luhnValid(v.replace(/\D/gu, '')))).toEqual([]);
  });

  it('counts the planted items that survive redact, and those verify does not flag', async () => {
    const records = heldOut6Records(seeded(HELD_OUT6_SEED));
    expect(records.length).toBeGreaterThanOrEqual(250);
    // Its first run, as written (the held-out figure): 56 of 255 survived (22.0%), all unflagged
    // (two of them cards the corpus had written with a wrong Luhn digit, since corrected). The
    // detectors were then extended by form (docs/hostile-input.md); since then 0 of 255.
    const outcome = await expectHeldOutCorpus('sixth held-out PII corpus', records, tmp.path, 1);
    expect(outcome.survivors.length / records.length).toBeLessThanOrEqual(0.02);
    expect(outcome.unflagged).toEqual([]);
  });
});
