import { describe, expect, it } from 'vitest';
import { hashCanonical } from '../core/canonical-json.js';
import { InvalidArgumentError } from '../core/errors.js';
import { buildGenerationMessages } from './messages.js';
import { loadBuiltinOntology } from './ontology.js';
import { loadBuiltinPerturbations } from './perturbations.js';
import { assignSampleSeeds, buildGenerationPlan, buildLabelerCell, cellSeed, PAPER_GENERATION_PARAMS, sharedSeedCells } from './plan.js';
import { loadBuiltinQuestions } from './questions.js';

const questions = loadBuiltinQuestions().questions;
const perturbations = loadBuiltinPerturbations();
const categoryCount = perturbations.categories.length;

describe('generation plan', () => {
  const base = { questions: questions.slice(0, 2), perturbations, targets: ['sim:memory', 'sim:memory-null'], k: 3 };

  it('has k samples per perturbed stimulus and a reference plus k samples for no_perturbation', () => {
    const cells = buildGenerationPlan(base);
    expect(cells).toHaveLength(2 * 2 * ((categoryCount - 1) * 3 + 4));
    const reference = cells.filter((cell) => cell.labels.role === 'reference');
    expect(reference).toHaveLength(4);
    expect(reference.every((cell) => cell.request.sample === 0 && cell.labels.condition === 'no_perturbation')).toBe(true);
    expect(cells.filter((cell) => cell.labels.role === 'no_perturbation').map((cell) => cell.request.sample)).toEqual([1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]);
    const first = cells.find((cell) => cell.labels.condition === 'disability')!;
    expect(first.labels).toMatchObject({
      experiment: 'memory',
      stage: 'generation',
      target: 'sim:memory',
      question_id: questions[0]!.id,
      domain: questions[0]!.domain,
      subdomain: questions[0]!.subdomain,
      condition: 'disability',
      tier: 'persona',
      sample: 0,
      role: 'perturbed',
      mode: 'prepend',
    });
    expect(String(first.labels.stimulus_id)).toMatch(/^disability\.\d$/);
  });

  it("uses the paper's decoding defaults and the requested injection mode", () => {
    const cells = buildGenerationPlan({ ...base, mode: 'system' });
    expect(cells[0]!.request.params).toEqual({ temperature: 0.7, topP: 0.98, topK: 50, maxTokens: 2048 });
    expect(PAPER_GENERATION_PARAMS).toEqual({ temperature: 0.7, topP: 0.98, topK: 50, maxTokens: 2048 });
    const persona = cells.find((cell) => cell.labels.tier === 'persona')!;
    const stimulus = perturbations.categories.flatMap((category) => category.stimuli).find((entry) => entry.id === persona.labels.stimulus_id)!;
    expect(persona.request.messages).toEqual(buildGenerationMessages(questions[0]!.text, stimulus.text, 'system'));
  });

  it('is deterministic, gives every cell a distinct key, and keeps a question’s stimuli when other questions change', () => {
    const a = buildGenerationPlan(base);
    expect(buildGenerationPlan(base)).toEqual(a);
    expect(new Set(a.map((cell) => hashCanonical(cell.request))).size).toBe(a.length);
    const alone = buildGenerationPlan({ ...base, questions: [questions[1]!], targets: ['sim:memory'] });
    const fromPair = a.filter((cell) => cell.labels.question_id === questions[1]!.id && cell.labels.target === 'sim:memory');
    expect(alone).toEqual(fromPair);
    const otherSeed = buildGenerationPlan({ ...base, seed: 7 });
    expect(otherSeed.map((cell) => cell.labels.stimulus_id)).not.toEqual(a.map((cell) => cell.labels.stimulus_id));
  });

  it('selects conditions and stimulus counts', () => {
    const all = buildGenerationPlan({ ...base, targets: ['sim:memory'], k: 1, conditions: ['no_perturbation', 'age'], stimuliPerCategory: 'all' });
    const ageStimuli = perturbations.categories.find((category) => category.id === 'age')!.stimuli.length;
    expect(all).toHaveLength(2 * (2 + ageStimuli));
    const two = buildGenerationPlan({ ...base, targets: ['sim:memory'], k: 1, conditions: ['gender'], stimuliPerCategory: 2 });
    expect(two).toHaveLength(4);
    expect(new Set(two.slice(0, 2).map((cell) => cell.labels.stimulus_id)).size).toBe(2);
  });

  it('rejects bad arguments with typed errors', () => {
    expect(() => buildGenerationPlan({ ...base, k: 0 })).toThrow(InvalidArgumentError);
    expect(() => buildGenerationPlan({ ...base, targets: [] })).toThrow(/targets/);
    expect(() => buildGenerationPlan({ ...base, conditions: ['mood'] })).toThrow(/unknown perturbation category "mood"/);
    expect(() => buildGenerationPlan({ ...base, stimuliPerCategory: 0 })).toThrow(/stimuliPerCategory/);
  });
});

describe('sample seeds', () => {
  const plan = () => buildGenerationPlan({ questions: questions.slice(0, 3), perturbations, targets: ['a', 'b'], k: 2 });
  const seedsOf = (cells: ReturnType<typeof plan>) =>
    cells.map((cell) => ({ seed: cell.request.params.seed, target: String(cell.labels.target), question: String(cell.labels.question_id) }));

  it('cell seeding gives every cell of a (target, question) its own seed, derived from the cell identity', () => {
    const cells = plan();
    assignSampleSeeds(cells, 'cell', 42);
    expect(sharedSeedCells(seedsOf(cells))).toBe(0);
    for (const cell of cells) {
      expect(Number.isInteger(cell.request.params.seed) && (cell.request.params.seed as number) >= 0).toBe(true);
      expect(cell.request.params.seed).toBeLessThanOrEqual(0x7fffffff);
    }
    const first = cells[0]!;
    expect(first.request.params.seed).toBe(
      cellSeed(42, {
        question: String(first.labels.question_id),
        condition: String(first.labels.condition),
        stimulus: String(first.labels.stimulus_id),
        sample: 0,
      }),
    );
    // Independent of the other cells of the plan and of the target; dependent on the base seed.
    const other = plan();
    assignSampleSeeds(other, 'cell', 7);
    expect(other.map((c) => c.request.params.seed)).not.toEqual(cells.map((c) => c.request.params.seed));
    const a = cells.filter((c) => c.labels.target === 'a').map((c) => c.request.params.seed);
    const b = cells.filter((c) => c.labels.target === 'b').map((c) => c.request.params.seed);
    expect(a).toEqual(b);
  });

  it('offset seeding (earlier default) makes perturbed sample 0 share the reference seed; fixed and none as named', () => {
    const offset = plan();
    assignSampleSeeds(offset, 'offset', 42);
    expect(sharedSeedCells(seedsOf(offset))).toBeGreaterThan(0);
    const reference = offset.find((c) => c.labels.role === 'reference')!;
    const perturbed = offset.find((c) => c.labels.role === 'perturbed' && c.request.sample === 0)!;
    expect(perturbed.request.params.seed).toBe(reference.request.params.seed);
    const fixed = plan();
    assignSampleSeeds(fixed, 'fixed', 9);
    expect(new Set(fixed.map((c) => c.request.params.seed))).toEqual(new Set([9]));
    const none = plan();
    assignSampleSeeds(none, 'none', 9);
    expect(none.every((c) => c.request.params.seed === undefined)).toBe(true);
    expect(() => assignSampleSeeds(none, 'random' as never, 1)).toThrow(/sampleSeeds/);
  });

  it('re-derives a seed that collides inside a (target, question)', () => {
    const cells = buildGenerationPlan({ questions: questions.slice(0, 1), perturbations, targets: ['a'], k: 1 });
    // Two cells with the same identity (a duplicated plan) must still get distinct seeds.
    const doubled = [...cells, ...cells.map((c) => ({ request: { ...c.request, params: { ...c.request.params } }, labels: { ...c.labels } }))];
    assignSampleSeeds(doubled, 'cell', 42);
    expect(sharedSeedCells(seedsOf(doubled))).toBe(0);
  });
});

describe('labeler cell', () => {
  it('is a temperature-0 request with the labeler prompt and labeling labels', () => {
    const cell = buildLabelerCell(['One.', 'Two.'], loadBuiltinOntology(), { model: 'sim:labeler', labels: { question_id: 'q' } });
    expect(cell.request).toMatchObject({ model: 'sim:labeler', params: { temperature: 0, maxTokens: 1024 }, sample: 0 });
    expect(cell.request.messages[1]!.content).toContain('<step number="2">\nTwo.\n</step>');
    expect(cell.labels).toEqual({ experiment: 'memory', stage: 'labeling', question_id: 'q' });
  });
});
