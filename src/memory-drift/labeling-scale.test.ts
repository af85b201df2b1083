import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { unusableStage } from '../cli/commands/memory.js';
import { registerSimProfile } from '../models/sim-registry.js';
import { createLabelerSimProfile } from './sim.js';
import { memoryConfigSchema } from './config.js';
import { loadBuiltinOntology } from './ontology.js';
import { labelerCheckPasses, labelerTokenBudget, labelingItem, memoryLabelingLabels, runMemory, stepsOfGeneration } from './run.js';

const config = (steps: Record<string, unknown> = {}) => memoryConfigSchema.parse({ targets: ['sim:memory'], labeler: 'sim:labeler', steps });
const answer = (n: number) =>
  `${Array.from({ length: n }, (_, i) => `<step_${i + 1}>Weighing point ${i + 1}.</step_${i + 1}>`).join('\n')}\n<answer>Yes.</answer>`;

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

describe('labeler-check --alt-ontology', () => {
  it('refuses when the run used an ontology whose labels differ from the alternative wording', () => {
    const cfg = config();
    const check = { run: 'r', labelers: [], repeat: false, altOntology: 'builtin:alt', limit: null, seed: 1 };
    const builtin = loadBuiltinOntology();
    expect(labelerCheckPasses(cfg, { ontology: builtin, source: 'builtin:default' }, check)).toHaveLength(2);
    const other = { ...builtin, categories: builtin.categories.map((c, i) => (i === 0 ? { ...c, name: 'Other' } : c)) };
    expect(() => labelerCheckPasses(cfg, { ontology: other, source: 'my-ontology.json' }, check)).toThrow(/labels differ.*rewording/);
  });
});

describe('a run that produced nothing usable', () => {
  it('names why and what to change', async () => {
    const base = {
      runId: 'r',
      resumed: false,
      generationCells: 10,
      emptyGenerations: 2,
      failedGenerations: 0,
      noSteps: 3,
      refusals: 5,
      stepMethods: {},
      labelerItems: 0,
      invalidLabelings: 0,
      unansweredLabelings: 0,
      interrupted: false,
      stopReason: null,
      spendUsd: 0,
      pricedSpendUsd: 0,
      unpricedCells: 0,
    };
    expect(await unusableStage(base, '/nonexistent.db')).toMatch(/no generation produced an answer with steps.*5 refused.*system prompt/);
    registerBuiltinSimProfiles();
    registerSimProfile(createLabelerSimProfile({ name: 'labeler-broken', malformedProbability: 1 }));
    const db = join(mkdtempSync(join(tmpdir(), 'echolens-unusable-')), 'run.db');
    const cfg = memoryConfigSchema.parse({
      targets: ['sim:memory'],
      labeler: 'sim:labeler-broken',
      questions: { limit: 2 },
      conditions: ['filler'],
      labelerReasks: 1,
    });
    const result = await runMemory(cfg, db, { progress: false, signal: new AbortController().signal });
    expect(result.invalidLabelings).toBe(result.labelerItems);
    const message = (await unusableStage(result, db)) ?? '';
    expect(message).toMatch(/every labeling of run .* is unusable \(6 invalid after re-asks, 0 unanswered; no_json 6\).*maxTokens/);
    expect(await unusableStage({ ...base, labelerItems: 4, invalidLabelings: 3 }, db)).toBeNull();
  });
});
