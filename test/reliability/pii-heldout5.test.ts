// Personal data in forms the redactor was not built against (issue #40): the fifth held-out
// corpus (pii-heldout5-corpus.ts), written after the detectors' last change and run once as
// written; the detectors were not changed after seeing it. The figures per kind are printed on
// each run (docs/sessions.md).
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { describe, expect, it } from 'vitest';
import { luhnValid } from '../../src/sessions/redact/nordic-ids.js';
import { useTempDir } from '../../src/sessions/testing/temp-dir.js';
import { expectHeldOutCorpus } from './pii-heldout-run.js';
import { HELD_OUT5_SEED, heldOut5Records } from './pii-heldout5-corpus.js';
import { seeded } from './size.js';

const tmp = useTempDir('echolens-pii-heldout5-');

describe('sessions redact / verify --pii on a fifth held-out corpus', { timeout: 600_000 }, () => {
  it('plants IBANs that pass mod 97 and their national checks, and cards that pass Luhn', () => {
    const records = heldOut5Records(seeded(HELD_OUT5_SEED));
    const of = (kind: string) => records.filter((r) => r.item.kind === kind).map((r) => r.item.value);
    expect(of('iban').length).toBe(4);
    expect(of('iban').filter((v) => !isValidIBAN(electronicFormatIBAN(v) ?? ''))).toEqual([]);
    expect(of('card').filter((v) => !luhnValid(v.replace(/\D/gu, '')))).toEqual([]);
  });

  it('counts the planted items that survive redact, and those verify does not flag', async () => {
    const records = heldOut5Records(seeded(HELD_OUT5_SEED));
    expect(records.length).toBe(38);
    // Its first run, as written (the held-out figure): 5 of 38 survived (13.2%: a name inside
    // "TODO(…)", the given name after "Morning", an Australian mobile in national form, a Norwegian
    // fødselsnummer and a Belgian national number), all 5 unflagged. Detectors for the last two were
    // added after it (3 of 38 since). This only bounds a regression.
    await expectHeldOutCorpus('fifth held-out PII corpus', records, tmp.path, 5 / 38);
  });
});
