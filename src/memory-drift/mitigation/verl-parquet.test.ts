import { parquetReadObjects, parquetMetadata, parquetSchema } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { smallGrpoPlan } from '../testing/grpo-plan.js';
import { grpoPromptRows, splitByQuestion, type VerlPromptRow } from './grpo-data.js';
import { verlRowsToParquet } from './verl-parquet.js';

// The file is read back with hyparquet (a separate reader package, not the writer's code path).
async function readBack(bytes: Uint8Array) {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const metadata = parquetMetadata(file);
  const rows = (await parquetReadObjects({ file })) as Array<Record<string, unknown>>;
  return { metadata, rows, schema: parquetSchema(metadata) };
}

describe('verl Parquet export', async () => {
  const { cells, ids } = await smallGrpoPlan();
  const references = new Map([
    [ids[0]!, ['Practical/Professional advancement', 'Protective/Security and stability']],
    [ids[1]!, ['Social/Social equity and justice']],
    [ids[2]!, ['Personal/Pleasure and enjoyment']],
  ]);

  it('is a Parquet file whose rows are the verl rows: prompt as a list of {content, role}, reward_model as a struct', async () => {
    const rows = grpoPromptRows(cells, references, { format: 'verl' }).rows as VerlPromptRow[];
    const bytes = verlRowsToParquet(rows);
    // Parquet files start and end with the magic "PAR1".
    expect(new TextDecoder().decode(bytes.slice(0, 4))).toBe('PAR1');
    expect(new TextDecoder().decode(bytes.slice(-4))).toBe('PAR1');
    const { metadata, rows: back, schema } = await readBack(bytes);
    expect(Number(metadata.num_rows)).toBe(rows.length);
    expect(schema.children.map((c) => c.element.name)).toEqual(['data_source', 'prompt', 'ability', 'reward_model', 'extra_info']);
    expect(back).toHaveLength(9);
    for (const [i, row] of rows.entries()) {
      const got = back[i]!;
      expect(got.data_source).toBe('echolens-driftlens');
      expect(got.ability).toBe('reasoning');
      expect(got.prompt).toEqual(row.prompt.map((m) => ({ content: m.content, role: m.role })));
      expect(got.reward_model).toEqual({ ground_truth: row.reward_model.ground_truth, style: 'rule' });
      const extra = got.extra_info as Record<string, unknown>;
      expect(Number(extra.index)).toBe(i);
      expect(extra).toMatchObject({ question_id: row.extra_info.question_id, condition: row.extra_info.condition, tier: row.extra_info.tier });
    }
    // The persona line of a perturbed prompt survives the round trip (UTF-8 text, multi-line content).
    const gender = rows.findIndex((r) => r.extra_info.condition === 'gender');
    expect((back[gender]!.prompt as Array<{ content: string }>).at(-1)!.content).toBe(rows[gender]!.prompt.at(-1)!.content);
  });

  it('writes an inline reference as a JSON array string in ground_truth', async () => {
    const rows = grpoPromptRows(cells, references, { format: 'verl', inline: true }).rows as VerlPromptRow[];
    const { rows: back } = await readBack(verlRowsToParquet(rows));
    const truth = (back[0]!.reward_model as { ground_truth: string }).ground_truth;
    expect(JSON.parse(truth)).toEqual(references.get(ids[0]!));
  });

  it('refuses to write no rows', () => {
    expect(() => verlRowsToParquet([])).toThrow(/at least one row/);
  });

  it('splits by question: every question on one side, indices renumbered per side, the same split for any row order', () => {
    const rows = grpoPromptRows(cells, references, { format: 'verl' }).rows as VerlPromptRow[];
    const split = splitByQuestion(rows, 0.5);
    expect(split.train.length + split.val.length).toBe(rows.length);
    const trainIds = new Set(split.train.map((r) => r.extra_info.question_id));
    for (const r of split.val) expect(trainIds.has(r.extra_info.question_id)).toBe(false);
    expect(split.train.map((r) => r.extra_info.index)).toEqual(split.train.map((_, i) => i));
    const reversed = splitByQuestion([...rows].reverse(), 0.5);
    expect(new Set(reversed.val.map((r) => r.extra_info.question_id))).toEqual(new Set(split.val.map((r) => r.extra_info.question_id)));
    expect(splitByQuestion(rows, 0).val).toHaveLength(0);
    expect(() => splitByQuestion(rows, 1)).toThrow(/fraction/);
  });
});
