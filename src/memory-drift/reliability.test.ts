import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../core/errors.js';
import { type LabelRecord, labelAgreement, labelerReliability } from './reliability.js';

const record = (labeler: string, item: string, step: number, label: string | null, run: string | number = 1, wording = 'original'): LabelRecord => ({
  item,
  step,
  labeler,
  run,
  wording,
  label,
});

/** Four steps of two responses labelled by one labeler/run/wording. */
const labels = (labeler: string, values: Array<string | null>, run: string | number = 1, wording = 'original') =>
  values.map((label, i) => record(labeler, i < 2 ? 'r1' : 'r2', i % 2, label, run, wording));

describe('labelAgreement', () => {
  it('computes exact agreement and Cohen κ on label strings', () => {
    const a = labels('x', ['S/A', 'S/A', 'P/B', 'P/B']);
    const b = labels('y', ['S/A', 'P/B', 'P/B', 'P/B']);
    const result = labelAgreement(a, b);
    expect(result.n).toBe(4);
    expect(result.exact).toBe(0.75);
    // p_o = 3/4; marginals a (½, ½), b (¼, ¾): p_e = ½·¼ + ½·¾ = ½; κ = (¾ − ½)/(1 − ½) = ½.
    expect(result.kappa).toBeCloseTo(0.5, 12);
    expect(result.unpaired).toBe(0);
    expect(result.invalid).toBe(0);
  });

  it('skips invalid and unpaired steps and counts them', () => {
    const a = [...labels('x', ['S/A', null, 'P/B', 'P/B']), record('x', 'r3', 0, 'S/A')];
    const b = [...labels('y', ['S/A', 'S/A', 'P/B', 'S/A']), record('y', 'r4', 0, 'S/A')];
    const result = labelAgreement(a, b);
    expect(result).toMatchObject({ n: 3, invalid: 1, unpaired: 2 });
    expect(result.exact).toBeCloseTo(2 / 3, 12);
  });

  it('reports κ as an error when both sides use a single label', () => {
    const result = labelAgreement(labels('x', ['S/A', 'S/A']), labels('y', ['S/A', 'S/A']));
    expect(result.exact).toBe(1);
    expect(result.kappa).toMatchObject({ error: expect.stringMatching(/κ is undefined/) });
    const none = labelAgreement(labels('x', [null]), labels('y', ['S/A']));
    expect(none.exact).toMatchObject({ error: expect.any(String) });
    expect(none.kappa).toMatchObject({ error: expect.any(String) });
  });

  it('rejects duplicates and malformed records', () => {
    expect(() => labelAgreement([record('x', 'r1', 0, 'A'), record('x', 'r1', 0, 'B')], [])).toThrow(/duplicate/);
    expect(() => labelAgreement([{ ...record('x', 'r1', 0, 'A'), step: -1 }], [])).toThrow(InvalidArgumentError);
    expect(() => labelAgreement([{ ...record('x', 'r1', 0, 'A'), label: '' }], [])).toThrow(/label/);
  });
});

describe('labelerReliability', () => {
  const records: LabelRecord[] = [
    ...labels('qwen', ['S/A', 'S/A', 'P/B', 'P/B']),
    ...labels('claude', ['S/A', 'P/B', 'P/B', 'P/B']),
    ...labels('gpt', ['P/B', 'P/B', 'P/B', 'P/B']),
    // Re-labelling at T = 1 (run 2) and a rewritten ontology wording.
    ...labels('qwen', ['S/A', 'S/A', 'P/B', 'S/A'], 2),
    ...labels('qwen', ['S/A', 'S/A', 'S/A', 'S/A'], 1, 'rewritten'),
  ];
  const result = labelerReliability(records);

  it('gives every cross-model pair within a wording and run', () => {
    const original = result.crossModel.filter((c) => c.wording === 'original' && c.run === '1');
    expect(original.map((c) => `${c.labelerA}~${c.labelerB}`)).toEqual(['claude~gpt', 'claude~qwen', 'gpt~qwen']);
    const [claudeGpt, claudeQwen, gptQwen] = original;
    expect(claudeGpt!.exact).toBe(0.75);
    expect(claudeQwen!.exact).toBe(0.75);
    expect(gptQwen!.exact).toBe(0.5);
    expect(result.crossModelMean).toEqual([{ wording: 'original', run: '1', pairs: 3, meanExact: (0.75 + 0.75 + 0.5) / 3 }]);
  });

  it('gives within-model agreement between runs and agreement between wordings', () => {
    expect(result.withinModel).toHaveLength(1);
    expect(result.withinModel[0]).toMatchObject({ labeler: 'qwen', wording: 'original', runA: '1', runB: '2', n: 4, exact: 0.75 });
    expect(result.wordings).toHaveLength(1);
    expect(result.wordings[0]).toMatchObject({ labeler: 'qwen', run: '1', wordingA: 'original', wordingB: 'rewritten', exact: 0.5 });
    // a = (A, A, B, B), b = (A, A, A, A): p_o = ½ and p_e = ½·1 + ½·0 = ½, so κ = 0.
    expect(result.wordings[0]!.kappa).toBeCloseTo(0, 12);
  });
});
