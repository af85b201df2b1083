import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCsvTable, toCsv } from '../../core/csv.js';
import { packageRoot } from '../../core/version.js';
import { runCliInProcess } from '../testing/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-label-sheet-'));
const example = join(packageRoot(), 'examples', 'memory-sim.yaml');

describe('echolens memory label-sheet', { timeout: 600_000 }, () => {
  it('exports sampled steps of a simulated run, imports the filled sheet and reports agreement and κ', async () => {
    const db = join(dir, 'memory.db');
    const run = await runCliInProcess(['memory', 'run', example, '--db', db, '--questions-limit', '3', '--set', 'k=1', '--set', 'conditions=[filler, gender]']);
    expect(run.code).toBe(0);
    const sheet = join(dir, 'sheet.csv');
    const exported = await runCliInProcess(['memory', 'label-sheet', 'export', db, '-o', sheet, '--n', '12', '--seed', '3']);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toMatch(/wrote 12 steps/);
    const table = parseCsvTable(readFileSync(sheet, 'utf8'));
    expect(table.header).toEqual(['item_id', 'question', 'step', 'step_text', 'model_label', 'human_label', 'comment']);
    expect(table.rows).toHaveLength(12);
    // The reviewer sees the question's text, not its id.
    expect(table.rows[0]!.values.question!.length).toBeGreaterThan(20);
    // The reviewer agrees with the first 9, relabels 2 as unmapped and marks 1 ambiguous.
    const filled = toCsv(
      table.header,
      table.rows.map((row, i) => table.header.map((h) => (h === 'human_label' ? (i < 9 ? 'agree' : i < 11 ? 'unmapped' : 'ambiguous') : row.values[h]!))),
    );
    writeFileSync(sheet, filled);
    const imported = await runCliInProcess(['memory', 'label-sheet', 'import', sheet, '--format', 'json']);
    expect(imported.code).toBe(0);
    const report = JSON.parse(imported.stdout) as {
      reviews: Array<{ agreement: { compared: number; agreed: number; ambiguous: number; exact: number; perRoot: unknown[] } }>;
    };
    const agreement = report.reviews[0]!.agreement;
    expect(agreement).toMatchObject({ compared: 11, ambiguous: 1 });
    // sim:labeler never says unmapped on sim steps, so the two relabelled steps disagree.
    expect(agreement.agreed).toBe(9);
    expect(agreement.exact).toBeCloseTo(9 / 11, 12);
    expect(agreement.perRoot.length).toBeGreaterThan(1);
    const md = await runCliInProcess(['memory', 'label-sheet', 'import', sheet]);
    expect(md.stdout).toMatch(/Cohen's κ/);

    const bad = toCsv(table.header, [table.header.map((h) => (h === 'human_label' ? 'Nope/Nope' : table.rows[0]!.values[h]!))]);
    const badFile = join(dir, 'bad.csv');
    writeFileSync(badFile, bad);
    const refused = await runCliInProcess(['memory', 'label-sheet', 'import', badFile, '--key', join(dir, 'sheet.key.json')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/bad\.csv:2.*human_label/);
  });
});
