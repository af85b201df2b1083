// Personal data in transcripts (issue #40): a planted corpus (pii-corpus.ts) of names, phone
// numbers, postal addresses, IP addresses, card numbers, national ids and IBANs in Claude Code and
// Codex transcripts must not survive `sessions redact` (≤ 2%), and whatever survives must be
// flagged by `sessions verify` (0 unflagged). On this repository's own source code, the PII
// detectors may fire at most once per MB.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/core/version.js';
import { PII_KINDS } from '../../src/sessions/redact/pii.js';
import { redactFile } from '../../src/sessions/redact/redact-file.js';
import { loadGivenNames } from '../../src/sessions/redact/verify/name-check.js';
import { verifyFile, verifyPiiSpans } from '../../src/sessions/redact/verify/verify-file.js';
import { useTempDir } from '../../src/sessions/testing/temp-dir.js';
import { plantedItems, survives, transcriptLine } from './pii-corpus.js';
import { SEED, seeded, size } from './size.js';

const tmp = useTempDir('echolens-pii-');
const ALL = new Set(PII_KINDS);

describe('sessions redact / verify --pii on a planted corpus', { timeout: 600_000 }, () => {
  it('≤ 2% of planted items survive redact; every survivor is flagged by verify', async () => {
    const random = seeded(SEED);
    const items = plantedItems(random, size(30, 150));
    expect(items.length).toBeGreaterThanOrEqual(200);
    const lines = items.map((item, i) => transcriptLine(item, i, random));
    const input = join(tmp.path, 'planted.jsonl');
    const output = join(tmp.path, 'planted.redacted.jsonl');
    await writeFile(input, `${lines.join('\n')}\n`);
    await redactFile(input, output, { pii: ALL });
    const redacted = readFileSync(output, 'utf8').split('\n');
    const survivors = items.map((item, i) => ({ item, i })).filter(({ item, i }) => survives(item.value, redacted[i] ?? ''));
    const byKind: Record<string, number> = {};
    for (const { item } of survivors) byKind[item.kind] = (byKind[item.kind] ?? 0) + 1;
    // Verify the redacted file: each surviving item's line must be flagged with a PII finding.
    const report = await verifyFile(output, { pii: ALL, maxListed: 100_000 });
    const flaggedLines = new Set(report.residuals.filter((r) => r.kind.startsWith('pii:')).map((r) => r.line));
    const unflagged = survivors.filter(({ i }) => !flaggedLines.has(i + 1));
    console.log(
      `PII corpus: ${items.length} planted (${PII_KINDS.map((k) => `${items.filter((x) => x.kind === k).length} ${k}`).join(', ')}); ${survivors.length} survived redact (${((100 * survivors.length) / items.length).toFixed(1)}%: ${JSON.stringify(byKind)}); ${unflagged.length} of them unflagged by verify`,
    );
    expect(survivors.length / items.length).toBeLessThanOrEqual(0.02);
    expect(unflagged).toEqual([]);
    // Verify also flags the raw (unredacted) file's items: the detector sees what redact sees.
    const raw = await verifyFile(input, { pii: ALL, maxListed: 100_000 });
    const rawFlagged = new Set(raw.residuals.filter((r) => r.kind.startsWith('pii:')).map((r) => r.line));
    expect(rawFlagged.size / items.length).toBeGreaterThanOrEqual(0.98);
  });

  // Clean code: the repository's sources without tests and fixtures (the tests plant personal data on purpose).
  // What verify flags is what redact replaces plus verify's looser name check (pii:names_loose): both rates are held.
  it("at most 1 detection per MB on this repository's source code, by redact and by verify", async () => {
    const names = await loadGivenNames();
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) {
          if (name !== '__fixtures__' && name !== 'node_modules') walk(path);
        } else if (/\.(ts|mjs|js)$/u.test(name) && !name.endsWith('.test.ts')) files.push(path);
      }
    };
    walk(join(packageRoot(), 'src'));
    let bytes = 0;
    const hits: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      bytes += Buffer.byteLength(text);
      for (const span of verifyPiiSpans(text, ALL, names))
        hits.push(`${file.slice(packageRoot().length + 1)}: ${span.kind} ${text.slice(span.start, span.end)}`);
    }
    const mb = bytes / 1024 / 1024;
    const redactHits = hits.filter((h) => !h.includes(': pii:names_loose '));
    console.log(
      `PII false positives on src/ (${mb.toFixed(2)} MB): redact ${redactHits.length} = ${(redactHits.length / mb).toFixed(2)}/MB, ` +
        `verify ${hits.length} = ${(hits.length / mb).toFixed(2)}/MB${hits.length > 0 ? `\n${hits.slice(0, 20).join('\n')}` : ''}`,
    );
    expect(redactHits.length / mb).toBeLessThanOrEqual(1);
    expect(hits.length / mb).toBeLessThanOrEqual(1);
  });
});
