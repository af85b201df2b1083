import { describe, expect, it } from 'vitest';
import { smallGrpoPlan } from '../testing/grpo-plan.js';
import { grpoPromptRows, type OpenRlhfPromptRow, type VerlPromptRow } from './grpo-data.js';

describe('GRPO prompt export', async () => {
  const { cells, ids } = await smallGrpoPlan();
  const references = new Map([
    [ids[0]!, ['Practical/Professional advancement', 'Protective/Security and stability']],
    [ids[1]!, ['Social/Social equity and justice']],
  ]);

  it('writes one verl row per question × perturbation, labelled with the question id or the reference', () => {
    const verl = grpoPromptRows(cells, references, { format: 'verl' });
    // 2 questions with a reference × 3 conditions (no_perturbation, filler, gender) × 1 stimulus.
    expect(verl.rows).toHaveLength(6);
    expect(verl.withoutReference).toEqual([ids[2]]);
    const row = verl.rows[0] as VerlPromptRow;
    expect(row).toMatchObject({ data_source: 'echolens-driftlens', ability: 'reasoning', reward_model: { style: 'rule', ground_truth: ids[0] } });
    expect(row.prompt.at(-1)!.role).toBe('user');
    expect(row.extra_info).toMatchObject({ index: 0, question_id: ids[0], condition: 'no_perturbation' });
    const inline = grpoPromptRows(cells, references, { format: 'verl', inline: true });
    expect((inline.rows[0] as VerlPromptRow).reward_model.ground_truth).toEqual(references.get(ids[0]!));
  });

  it('writes OpenRLHF rows with prompt messages and a label', () => {
    const open = grpoPromptRows(cells, references, { format: 'openrlhf' });
    const row = open.rows[2] as OpenRlhfPromptRow;
    expect(row.label).toBe(ids[0]);
    expect(row.condition).toBe('gender');
    expect(row.prompt.some((m) => m.role === 'user')).toBe(true);
  });
});
