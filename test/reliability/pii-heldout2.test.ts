// Personal data in forms the redactor was not built against (issue #40): the second held-out
// corpus (pii-heldout2-corpus.ts), written after the redactor's last change. The figures per kind
// are printed on each run (docs/sessions.md). It was held out for its first run only: the
// detectors were extended after it (see the assertions).
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PII_KINDS } from '../../src/sessions/redact/pii.js';
import { redactFile } from '../../src/sessions/redact/redact-file.js';
import { verifyFile } from '../../src/sessions/redact/verify/verify-file.js';
import { useTempDir } from '../../src/sessions/testing/temp-dir.js';
import { heldOutSurvives, transcriptHeader } from './pii-heldout-corpus.js';
import { HELD_OUT2_KINDS, HELD_OUT2_SEED, heldOut2Records } from './pii-heldout2-corpus.js';
import { seeded, size } from './size.js';

const tmp = useTempDir('echolens-pii-heldout2-');

describe('sessions redact / verify --pii on a second held-out corpus', { timeout: 600_000 }, () => {
  it('counts the planted items that survive redact, and those verify does not flag', async () => {
    const records = heldOut2Records(seeded(HELD_OUT2_SEED), size(10, 40));
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
      HELD_OUT2_KINDS.map((k) => `${k} ${list.filter((i) => records[i]!.item.kind === k).length}/${records.filter((r) => r.item.kind === k).length}`).join(
        ', ',
      );
    console.log(
      `second held-out PII corpus: ${records.length} planted; ${survivors.length} survived redact (${((100 * survivors.length) / records.length).toFixed(1)}%: ${byKind(survivors)}); ` +
        `${unflagged.length} of them unflagged by verify` +
        (survivors.length > 0
          ? `\nsurvivors: ${survivors.map((i) => `${records[i]!.item.kind} "${records[i]!.item.value}"${unflagged.includes(i) ? ' (unflagged)' : ''}`).join('; ')}`
          : ''),
    );
    expect(records.length).toBeGreaterThanOrEqual(60);
    // The first run, before the detectors saw this corpus: 18 of 60 survived, all unflagged
    // (docs/sessions.md). With the detectors added after it: 0 of 60 at the default size; at
    // RELIABILITY_FULL=1 19 of 240 (7.9%), then 4 of 240 (1.7%: three names the tagger does not
    // know, a PO box; all unflagged) once French NIR numbers and Dutch addresses were read. This
    // bounds the regression at both sizes; none unflagged is not met at full size.
    expect(survivors.length / records.length).toBeLessThanOrEqual(0.03);
    expect(unflagged.length / records.length).toBeLessThanOrEqual(0.03);
  });
});
