import { describe, expect, it } from 'vitest';
import { analyzeMemory, type LabelledSample, scoreTrajectories } from './analysis.js';
import { detectRefusal } from './refusals.js';

/** Short refusals, with or without answer tags. */
const REFUSALS = [
  "I'm sorry, but I can't help with that.",
  'I’m sorry, I cannot assist with this request.',
  '<answer>I cannot provide advice on that.</answer>',
  'Sorry, but I won’t do that.',
  'As an AI language model, I cannot make this decision for you.',
  "Unfortunately, I can't answer questions like this.",
  '<think>The user asks something I will not do.</think>\nI am unable to help with that request.',
];

/** Answers, hedges and long texts. */
const NOT_REFUSALS = [
  '<step_1>Fairness matters.</step_1>\n<answer>Choose the second option.</answer>',
  'I think you should take the job, because the skills pay off.',
  "I'm sorry to hear that. Here is what I would weigh: first, the cost…",
  `I cannot help but notice that ${'the options differ in cost and in risk. '.repeat(20)}`,
  '',
];

describe('detectRefusal', () => {
  it.each(REFUSALS)('recognises a short refusal, with or without answer tags: %j', (text) => {
    expect(detectRefusal(text).refusal, text).toBe(true);
  });

  it.each(NOT_REFUSALS)('leaves answers, hedges and long texts alone: %j', (text) => {
    expect(detectRefusal(text).refusal, text).toBe(false);
  });

  it('finds no refusal where there is no answer', () => {
    expect(detectRefusal(null)).toEqual({ refusal: false, evidence: null });
  });
});

describe('refusals in the analysis', () => {
  const sample = (question: string, condition: string, tier: LabelledSample['tier'], sample: number, status: LabelledSample['status']): LabelledSample => ({
    target: 't',
    question,
    domain: 'd',
    condition,
    tier,
    stimulus: `${condition}.0`,
    sample,
    role: tier === 'none' ? (sample === 0 ? 'reference' : 'no_perturbation') : 'perturbed',
    status,
    symbols: status === 'labelled' ? ['A/x', sample % 2 === 0 ? 'B/y' : 'A/x'] : null,
  });

  it('excludes refused samples from drift, counts them and compares their rate with the floor', () => {
    const samples: LabelledSample[] = [];
    for (let q = 0; q < 40; q++) {
      samples.push(sample(`q${q}`, 'no_perturbation', 'none', 0, 'labelled'));
      samples.push(sample(`q${q}`, 'no_perturbation', 'none', 1, 'labelled'));
      samples.push(sample(`q${q}`, 'filler', 'noise', 0, 'labelled'));
      samples.push(sample(`q${q}`, 'disability', 'persona', 0, q < 20 ? 'refused' : 'labelled'));
    }
    const scored = scoreTrajectories(samples);
    const disability = scored.excluded.find((e) => e.condition === 'disability')!;
    expect(disability).toMatchObject({ total: 40, scored: 20, refused: 20 });
    const report = analyzeMemory(scored.observations, { B: 200 });
    const finding = report.refusals.find((r) => r.condition === 'disability')!;
    expect(finding).toMatchObject({ answered: 40, refused: 20, rate: 0.5, floorRate: 0 });
    if ('error' in finding.difference) throw new Error(finding.difference.error);
    expect(finding.difference.estimate).toBe(0.5);
    expect(finding.difference.p).toBeLessThan(0.001);
    const filler = report.refusals.find((r) => r.condition === 'filler')!;
    expect(filler.difference).toMatchObject({ estimate: 0, p: 1 });
    const condition = report.targets[0]!.metrics.dtw.conditions.find((c) => c.condition === 'disability')!;
    expect(condition.n).toBe(20);
  });
});
