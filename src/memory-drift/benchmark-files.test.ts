import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { InputError } from '../core/errors.js';
import { loadDriftLensMaterials } from '../materials/driftlens.js';
import { fillTemplate } from '../materials/python-literal.js';
import { loadBenchmarkFile } from './benchmark-files.js';
import { memoryConfigSchema } from './config.js';
import { questionIdFromText } from './questions.js';
import { memoryRunOptions, resolveMemoryStimuli } from './run.js';

/**
 * The authors' released benchmark files read from a local path: a Parquet file written here
 * with a JS Parquet writer (hyparquet-writer, a dev dependency), JSON and JSONL rows, and
 * training records whose question sits inside the authors' instruction (a synthetic copy of
 * their repository layout supplies it).
 */

const dir = mkdtempSync(join(tmpdir(), 'echolens-benchmark-'));
const LAYOUT = join(import.meta.dirname, '__fixtures__', 'driftlens-layout');

const Q = [
  'Should I tell my manager that a colleague is taking credit for my work, or handle it privately?',
  'What is the best way to define a budget category?',
  'Is it worth moving to a cheaper apartment farther from work, or staying close and paying more?',
  'My neighbour keeps parking in front of my driveway. How should I respond?',
  'I found a wallet with cash on the street.',
];

function writeParquet(name: string, columns: Array<{ name: string; data: unknown[] }>): string {
  const file = join(dir, name);
  const buffer = parquetWriteBuffer({ columnData: columns.map((c) => ({ ...c, type: 'STRING' as const })) });
  writeFileSync(file, Buffer.from(buffer));
  return file;
}

// One row per (question, intervention), as the authors' flat tables are.
const FLAT = writeParquet('flat.parquet', [
  { name: 'raw_question', data: [Q[0], Q[0], Q[1], Q[2], Q[2], Q[3], Q[4]] },
  { name: 'category', data: ['no_intervention', 'persona_age', 'no_intervention', 'no_intervention', 'persona_job', 'no_intervention', 'no_intervention'] },
  { name: 'intervention', data: ['', 'I am 30. ', '', '', 'I am a nurse. ', '', ''] },
  { name: 'domain', data: ['career', 'career', 'finance', 'finance', 'finance', 'daily', 'ethics'] },
]);

describe('the authors’ benchmark files (local, no network)', () => {
  it('reads a Parquet file: one question per distinct text, in first-seen order, with its domain', async () => {
    const loaded = await loadBenchmarkFile({ file: FLAT });
    expect(loaded.rows).toBe(7);
    expect(loaded.duplicates).toBe(2);
    expect(loaded.set.questions).toEqual(
      Q.map((text, i) => ({ id: questionIdFromText(text), text, domain: ['career', 'finance', 'finance', 'daily', 'ethics'][i] })),
    );
    expect(loaded.set.sha256).toMatch(/^[0-9a-f]{64}$/u);
    expect(loaded.removed).toEqual([]);
  });

  it('applies the App. A keyword filters: the drop list, then (keep-signals) the keep signals', async () => {
    const drop = await loadBenchmarkFile({ file: FLAT, curation: 'drop-list' });
    expect(drop.set.questions.map((q) => q.text)).toEqual([Q[0], Q[2], Q[3], Q[4]]);
    expect(drop.removed).toEqual([{ id: questionIdFromText(Q[1] as string), text: Q[1], verdict: 'drop', phrases: expect.arrayContaining(['what is']) }]);
    const keep = await loadBenchmarkFile({ file: FLAT, curation: 'keep-signals' });
    // Q[4] states a situation without asking for advice, a comparison or a priority: no keep signal.
    expect(keep.set.questions.map((q) => q.text)).toEqual([Q[0], Q[2], Q[3]]);
    expect(keep.removed.map((r) => [r.text, r.verdict])).toEqual([
      [Q[1], 'drop'],
      [Q[4], 'review'],
    ]);
  });

  it('reads JSON rows, column-oriented JSON and JSONL the same way', async () => {
    const rows = Q.map((text) => ({ question: text, source: 'mixed' }));
    const array = join(dir, 'rows.json');
    writeFileSync(array, JSON.stringify(rows));
    const columns = join(dir, 'columns.json');
    writeFileSync(columns, JSON.stringify({ question: Q, source: Q.map(() => 'mixed') }));
    const lines = join(dir, 'rows.jsonl');
    writeFileSync(lines, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    for (const file of [array, columns, lines]) {
      const loaded = await loadBenchmarkFile({ file });
      expect(loaded.set.questions.map((q) => [q.text, q.domain])).toEqual(Q.map((t) => [t, 'mixed']));
    }
  });

  it('reads training records through the authors’ instruction and strips the persona string', async () => {
    const materials = loadDriftLensMaterials(LAYOUT);
    const persona = 'FIXTURE PERSONA: I am retired. ';
    const record = (question: string, memory: string) => ({
      data_source: 'symbolic_test',
      prompt: [
        { role: 'system', content: 'system text' },
        { role: 'user', content: fillTemplate(materials.instruction, { question: `${memory}${question}` }) },
      ],
    });
    const file = join(dir, 'records.json');
    writeFileSync(file, JSON.stringify([record(Q[0] as string, ''), record(Q[0] as string, persona), record(Q[2] as string, persona)]));
    const loaded = await loadBenchmarkFile({ file, instruction: materials.instruction, interventions: [persona] });
    expect(loaded.set.questions.map((q) => q.text)).toEqual([Q[0], Q[2]]);
    expect(loaded.duplicates).toBe(1);
    // Without the authors' instruction the records cannot be read: said so.
    await expect(loadBenchmarkFile({ file })).rejects.toThrow(/training records with a `prompt` column need the DriftLens materials/u);
  });

  it('bad input names the file and the field', async () => {
    const wrong = join(dir, 'wrong.json');
    writeFileSync(wrong, JSON.stringify([{ prompt_text: 'x' }]));
    const err = await loadBenchmarkFile({ file: wrong }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).file).toBe(wrong);
    expect((err as InputError).field).toBe('column');
    const blank = join(dir, 'blank.json');
    writeFileSync(blank, JSON.stringify([{ question: 'fine?' }, { question: '  ' }]));
    await expect(loadBenchmarkFile({ file: blank })).rejects.toMatchObject({ field: '1.question' });
    const notParquet = join(dir, 'broken.parquet');
    writeFileSync(notParquet, 'this is not parquet');
    await expect(loadBenchmarkFile({ file: notParquet })).rejects.toThrow(/not a readable Parquet file/u);
    await expect(loadBenchmarkFile({ file: FLAT, column: 'nope' })).rejects.toThrow(/no column "nope"/u);
  });

  it('a memory config reads them as questions.source: benchmark; the manifest records what the filters removed', async () => {
    const config = memoryConfigSchema.parse({
      targets: ['sim:memory'],
      labeler: 'sim:labeler',
      questions: { source: 'benchmark', file: FLAT, curation: 'drop-list' },
    });
    const stimuli = await resolveMemoryStimuli(config);
    expect(stimuli.questions.questions.map((q) => q.text)).toEqual([Q[0], Q[2], Q[3], Q[4]]);
    expect(stimuli.questions.source).toBe(FLAT);
    expect(memoryRunOptions(config, stimuli).benchmark).toEqual({
      rows: 7,
      duplicates: 2,
      curation: 'drop-list',
      removed: [{ id: questionIdFromText(Q[1] as string), verdict: 'drop', phrases: expect.arrayContaining(['what is']) }],
    });
    expect(() => memoryConfigSchema.parse({ targets: ['sim:memory'], labeler: 'sim:labeler', questions: { source: 'benchmark' } })).toThrow(
      /needs questions.file/u,
    );
  });
});
