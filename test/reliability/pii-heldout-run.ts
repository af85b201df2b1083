import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { PII_KINDS } from '../../src/sessions/redact/pii.js';
import { redactFile } from '../../src/sessions/redact/redact-file.js';
import { verifyFile } from '../../src/sessions/redact/verify/verify-file.js';
import { type HeldOutItem, heldOutSurvives, transcriptHeader } from './pii-heldout-corpus.js';

/** One planted item, placed in a Claude Code or Codex transcript line. */
export interface HeldOutRecord {
  item: HeldOutItem;
  tool: 'claude' | 'codex';
  line: string;
}

export interface HeldOutOutcome {
  /** Indices (into the records) of the items still in the redacted file. */
  survivors: number[];
  /** Those of the survivors on a line `sessions verify` does not flag. */
  unflagged: number[];
  /** One line of figures per kind, then the survivors (printed by the tests, quoted in docs/sessions.md). */
  summary: string;
}

/**
 * Runs a held-out corpus as a user would: the records written as a Claude Code and a Codex
 * transcript in `dir`, each redacted with every PII kind (`sessions redact --pii`), then verified;
 * an item survives when its value is still in its redacted line (heldOutSurvives), and is
 * unflagged when verify reports nothing on that line.
 */
export async function runHeldOutCorpus(name: string, records: readonly HeldOutRecord[], dir: string): Promise<HeldOutOutcome> {
  const files = { claude: [transcriptHeader('claude')], codex: [transcriptHeader('codex')] };
  const where = records.map(({ tool, line }) => {
    files[tool].push(line);
    return { tool, line: files[tool].length };
  });
  const survivors: number[] = [];
  const unflagged: number[] = [];
  for (const tool of ['claude', 'codex'] as const) {
    const input = join(dir, `${tool}.jsonl`);
    const output = join(dir, `${tool}.redacted.jsonl`);
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
  survivors.sort((a, b) => a - b);
  unflagged.sort((a, b) => a - b);
  const kinds = [...new Set(records.map((r) => r.item.kind))];
  const byKind = (list: number[]) =>
    kinds.map((k) => `${k} ${list.filter((i) => records[i]!.item.kind === k).length}/${records.filter((r) => r.item.kind === k).length}`).join(', ');
  const summary =
    `${name}: ${records.length} planted; ${survivors.length} survived redact (${((100 * survivors.length) / records.length).toFixed(1)}%: ${byKind(survivors)}); ` +
    `${unflagged.length} of them unflagged by verify` +
    (survivors.length > 0
      ? `\nsurvivors: ${survivors.map((i) => `${records[i]!.item.kind} "${records[i]!.item.value}"${unflagged.includes(i) ? ' (unflagged)' : ''}`).join('; ')}`
      : '');
  return { survivors, unflagged, summary };
}

/**
 * runHeldOutCorpus, its summary printed, then the bound a test keeps: at most `atMost` of the
 * planted items survive redact, and at most `atMost` survive unflagged by verify.
 */
export async function expectHeldOutCorpus(name: string, records: readonly HeldOutRecord[], dir: string, atMost: number): Promise<HeldOutOutcome> {
  const outcome = await runHeldOutCorpus(name, records, dir);
  console.log(outcome.summary);
  expect(outcome.survivors.length / records.length).toBeLessThanOrEqual(atMost);
  expect(outcome.unflagged.length / records.length).toBeLessThanOrEqual(atMost);
  return outcome;
}
