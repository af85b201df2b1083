// Personal data in forms the redactor was not built against (issue #40): the third held-out
// corpus (pii-heldout3-corpus.ts), written after the detectors' last change and not used to tune
// them. The figures per kind are printed on each run (docs/sessions.md).
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../../src/sessions/testing/temp-dir.js';
import { HELD_OUT3_SEED, heldOut3Records } from './pii-heldout3-corpus.js';
import { expectHeldOutCorpus } from './pii-heldout-run.js';
import { seeded, size } from './size.js';

const tmp = useTempDir('echolens-pii-heldout3-');

describe('sessions redact / verify --pii on a third held-out corpus', { timeout: 600_000 }, () => {
  it('generates IBANs that pass mod 97 and their national checks', () => {
    const ibans = heldOut3Records(seeded(HELD_OUT3_SEED), 40)
      .filter((r) => r.item.kind === 'iban')
      .map((r) => r.item.value);
    expect(ibans.length).toBe(40);
    expect(ibans.filter((v) => !isValidIBAN(electronicFormatIBAN(v) ?? ''))).toEqual([]);
  });

  it('counts the planted items that survive redact, and those verify does not flag', async () => {
    const records = heldOut3Records(seeded(HELD_OUT3_SEED), size(10, 40));
    expect(records.length).toBeGreaterThanOrEqual(60);
    // Measured once as written, before any detector for its forms: 28 of 60 survived (46.7%) at the
    // default size and 93 of 240 (38.8%) at RELIABILITY_FULL=1, all unflagged (the Polish and
    // Portuguese IBANs then lacked their national check digits: the generator's fault, since fixed).
    // With the detectors added after that run (no longer a held-out figure): 1 of 60 and 4 of 240.
    await expectHeldOutCorpus('third held-out PII corpus', records, tmp.path, 0.05);
  });
});
