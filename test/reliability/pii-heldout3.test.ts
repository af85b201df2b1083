// Personal data in forms the redactor was not built against (issue #40): the third held-out
// corpus (pii-heldout3-corpus.ts), written after the detectors' last change and not used to tune
// them. The figures per kind are printed on each run (docs/sessions.md).
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { describe, expect, it } from 'vitest';
import { PII_KINDS } from '../../src/sessions/redact/pii.js';
import { redactFile } from '../../src/sessions/redact/redact-file.js';
import { verifyFile } from '../../src/sessions/redact/verify/verify-file.js';
import { useTempDir } from '../../src/sessions/testing/temp-dir.js';
import { heldOutSurvives, transcriptHeader } from './pii-heldout-corpus.js';
import { HELD_OUT3_KINDS, HELD_OUT3_SEED, heldOut3Records } from './pii-heldout3-corpus.js';
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
    const files = { claude: [transcriptHeader('claude')], codex: [transcriptHeader('codex')] };
    const where = records.map(({ tool, line }) => {
      files[tool].push(line);
      return { tool, line: files[tool].length };
    });
    const survivors: number[] = [];
    const unflagged: number[] = [];
    for (const tool of ['claude', 'codex'] as const) {
      const input = join(tmp.path, `${tool}.jsonl`);
      const output = join(tmp.path, `${tool}.redacted.jsonl`);
      await writeFile(input, `${files[tool].join('\n')}\n`);
      await redactFile(input, output, { pii: new Set(PII_KINDS) });
      const redacted = readFileSync(output, 'utf8').split('\n');
      const flagged = new Set((await verifyFile(output, { pii: PII_KINDS, maxListed: 100_000 })).residuals.map((r) => r.line));
      where.forEach((w, i) => {
        if (w.tool !== tool || !heldOutSurvives(records[i]!.item, redacted[w.line - 1] ?? '')) return;
        survivors.push(i);
        if (!flagged.has(w.line)) unflagged.push(i);
      });
    }
    const byKind = (list: number[]) =>
      HELD_OUT3_KINDS.map((k) => `${k} ${list.filter((i) => records[i]!.item.kind === k).length}/${records.filter((r) => r.item.kind === k).length}`).join(
        ', ',
      );
    console.log(
      `third held-out PII corpus: ${records.length} planted; ${survivors.length} survived redact (${((100 * survivors.length) / records.length).toFixed(1)}%: ${byKind(survivors)}); ` +
        `${unflagged.length} of them unflagged by verify` +
        (survivors.length > 0
          ? `\nsurvivors: ${survivors.map((i) => `${records[i]!.item.kind} "${records[i]!.item.value}"${unflagged.includes(i) ? ' (unflagged)' : ''}`).join('; ')}`
          : ''),
    );
    expect(records.length).toBeGreaterThanOrEqual(60);
    // Measured once as written, before any detector for its forms: 28 of 60 survived (46.7%) at the
    // default size and 93 of 240 (38.8%) at RELIABILITY_FULL=1, all unflagged (the Polish and
    // Portuguese IBANs then lacked their national check digits: the generator's fault, since fixed).
    // With the detectors added after that run (no longer a held-out figure): 1 of 60 and 4 of 240.
    expect(survivors.length / records.length).toBeLessThanOrEqual(0.05);
    expect(unflagged.length / records.length).toBeLessThanOrEqual(0.05);
  });
});
