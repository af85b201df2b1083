// Personal data in forms the redactor was not built against (issue #40): the second held-out
// corpus (pii-heldout2-corpus.ts), written after the redactor's last change. The figures per kind
// are printed on each run (docs/sessions.md). It was held out for its first run only: the
// detectors were extended after it (see the assertions).
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../../src/sessions/testing/temp-dir.js';
import { HELD_OUT2_SEED, heldOut2Records } from './pii-heldout2-corpus.js';
import { expectHeldOutCorpus } from './pii-heldout-run.js';
import { seeded, size } from './size.js';

const tmp = useTempDir('echolens-pii-heldout2-');

describe('sessions redact / verify --pii on a second held-out corpus', { timeout: 600_000 }, () => {
  it('counts the planted items that survive redact, and those verify does not flag', async () => {
    const records = heldOut2Records(seeded(HELD_OUT2_SEED), size(10, 40));
    expect(records.length).toBeGreaterThanOrEqual(60);
    // The first run, before the detectors saw this corpus: 18 of 60 survived, all unflagged
    // (docs/sessions.md). With the detectors added after it: 0 of 60 at the default size; at
    // RELIABILITY_FULL=1 19 of 240 (7.9%), then 4 of 240 (1.7%: three names the tagger does not
    // know, a PO box; all unflagged) once French NIR numbers and Dutch addresses were read. This
    // bounds the regression at both sizes; none unflagged is not met at full size.
    await expectHeldOutCorpus('second held-out PII corpus', records, tmp.path, 0.03);
  });
});
