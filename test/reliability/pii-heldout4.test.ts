// Personal data in forms the redactor was not built against (issue #40): the fourth held-out
// corpus (pii-heldout4-corpus.ts), written after the detectors' last change and not used to tune
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
import { HELD_OUT4_KINDS, HELD_OUT4_SEED, heldOut4Records } from './pii-heldout4-corpus.js';
import { seeded } from './size.js';

const tmp = useTempDir('echolens-pii-heldout4-');

describe('sessions redact / verify --pii on a fourth held-out corpus', { timeout: 600_000 }, () => {
  it('generates IBANs that pass mod 97 and their national checks', () => {
    const ibans = heldOut4Records(seeded(HELD_OUT4_SEED))
      .filter((r) => r.item.kind === 'iban')
      .map((r) => r.item.value);
    expect(ibans.length).toBe(4);
    expect(ibans.filter((v) => !isValidIBAN(electronicFormatIBAN(v) ?? ''))).toEqual([]);
  });

  it('counts the planted items that survive redact, and those verify does not flag', async () => {
    const records = heldOut4Records(seeded(HELD_OUT4_SEED));
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
      HELD_OUT4_KINDS.map((k) => `${k} ${list.filter((i) => records[i]!.item.kind === k).length}/${records.filter((r) => r.item.kind === k).length}`).join(
        ', ',
      );
    console.log(
      `fourth held-out PII corpus: ${records.length} planted; ${survivors.length} survived redact (${((100 * survivors.length) / records.length).toFixed(1)}%: ${byKind(survivors)}); ` +
        `${unflagged.length} of them unflagged by verify` +
        (survivors.length > 0
          ? `\nsurvivors: ${survivors.map((i) => `${records[i]!.item.kind} "${records[i]!.item.value}"${unflagged.includes(i) ? ' (unflagged)' : ''}`).join('; ')}`
          : ''),
    );
    expect(records.length).toBe(28);
    // Written before its first run, which printed: 3 of 28 survive (10.7%: the name after "Per", a Finnish
    // street with a staircase letter and a Polish "ul." address), all 3 unflagged. This only bounds a regression.
    expect(survivors.length / records.length).toBeLessThanOrEqual(0.15);
    expect(unflagged.length / records.length).toBeLessThanOrEqual(0.15);
  });
});
