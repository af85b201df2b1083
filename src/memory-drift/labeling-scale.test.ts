import { describe, expect, it } from 'vitest';
import { memoryConfigSchema } from './config.js';
import { loadBuiltinOntology } from './ontology.js';
import { labelerTokenBudget, labelingItem, memoryLabelingLabels, stepsOfGeneration } from './run.js';

const config = (steps: Record<string, unknown> = {}) => memoryConfigSchema.parse({ targets: ['sim:memory'], labeler: 'sim:labeler', steps });
const answer = (n: number) => `${Array.from({ length: n }, (_, i) => `<step_${i + 1}>Weighing point ${i + 1}.</step_${i + 1}>`).join('\n')}\n<answer>Yes.</answer>`;

describe('labeling that scales', () => {
  it('caps the steps of an answer and records the cut', () => {
    const long = stepsOfGeneration(answer(5000), null, config());
    expect(long.steps).toHaveLength(64);
    expect(long.cut).toBe(5000 - 64);
    expect(long.steps[63]).toBe('Weighing point 64.');
    const custom = stepsOfGeneration(answer(150), null, config({ maxSteps: 200 }));
    expect(custom).toMatchObject({ cut: 0 });
    expect(custom.steps).toHaveLength(150);
    const labels = memoryLabelingLabels({ target: 't' }, 'k', 'main', 'builtin:default', long);
    expect(labels).toMatchObject({ step_count: 64, steps_cut: 4936 });
  });

  it('sizes the labeler output budget to the step count (a 150-step answer is not cut at 1,024 tokens)', () => {
    expect(labelerTokenBudget(1024, 5)).toBe(1024);
    expect(labelerTokenBudget(1024, 150)).toBe(128 + 32 * 150);
    const cfg = config({ maxSteps: 200 });
    const steps = stepsOfGeneration(answer(150), null, cfg).steps;
    const item = labelingItem(steps, cfg, { labeler: 'sim:labeler', ontology: loadBuiltinOntology(), labels: {} });
    expect(item.spec.request.params.maxTokens).toBe(4928);
    const short = labelingItem(steps.slice(0, 3), cfg, { labeler: 'sim:labeler', ontology: loadBuiltinOntology(), labels: {} });
    expect(short.spec.request.params.maxTokens).toBe(1024);
  });
});
