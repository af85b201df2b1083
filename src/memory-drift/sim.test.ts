import { describe, expect, it } from 'vitest';
import { getSimProfile } from '../models/sim-registry.js';
import type { ModelRequest } from '../models/types.js';
import './index.js';
import { buildLabelerMessages, parseLabelerOutput } from './labeler.js';
import { buildGenerationMessages, type InjectionMode } from './messages.js';
import { loadBuiltinOntology } from './ontology.js';
import { listStimuli, loadBuiltinPerturbations, type PerturbationTier } from './perturbations.js';
import { loadBuiltinQuestions } from './questions.js';
import {
  createLabelerSimProfile,
  createMemorySimProfile,
  type MemorySimProfile,
  SIM_STEP_CUES,
  SIM_SYMBOLS,
  simBaselineSequence,
  simLabelForStep,
} from './sim.js';
import { extractSteps } from './steps.js';

const questions = loadBuiltinQuestions().questions;
const stimuli = listStimuli(loadBuiltinPerturbations());
const ontology = loadBuiltinOntology();
const labeler = createLabelerSimProfile({ name: 'test-labeler' });
const SEED = 42;

function request(question: string, text: string, mode: InjectionMode = 'prepend', sample = 0): ModelRequest {
  return { model: 'sim:test', messages: buildGenerationMessages(question, text, mode), params: { temperature: 0.7 }, sample };
}

/** Generation → step extraction → labeler prompt → sim labeler → strict parser. */
function labelsFor(profile: MemorySimProfile, req: ModelRequest) {
  const answer = profile.answer(req, SEED);
  const extraction = extractSteps(answer.text, { reasoning: answer.reasoning ?? null });
  const labelRequest: ModelRequest = {
    model: 'sim:test-labeler',
    messages: buildLabelerMessages(extraction.steps, ontology),
    params: { temperature: 0 },
    sample: 0,
  };
  const parsed = parseLabelerOutput(labeler.answer(labelRequest, SEED).text, { stepCount: extraction.steps.length, ontology });
  return { extraction, parsed, trajectory: profile.trajectory(req, SEED) };
}

describe('sim profiles are registered and described as simulations', () => {
  it.each(['memory', 'memory-null', 'labeler'])('sim:%s', (name) => {
    const profile = getSimProfile(name);
    expect(profile).toBeDefined();
    expect(profile!.description).toMatch(/^Simulation \(measures nothing\)/);
  });
});

describe('sim cue lexicon', () => {
  it('covers exactly the 11 ontology symbols and each sentence carries only its own cue word', () => {
    expect([...SIM_SYMBOLS].sort()).toEqual(ontology.categories.flatMap((c) => c.subcategories.map((s) => `${c.name}/${s.name}`)).sort());
    for (const symbol of SIM_SYMBOLS) {
      for (const sentence of SIM_STEP_CUES[symbol]!.sentences) expect(simLabelForStep(sentence, SIM_SYMBOLS)).toBe(symbol);
    }
    expect(simLabelForStep('No cue here.', SIM_SYMBOLS)).toBe('unmapped');
  });
});

describe('sim:memory planted ground truth', () => {
  const profile = createMemorySimProfile({ name: 'planted', samplingNoise: 0.02 });

  it('is deterministic and derives the baseline from the question text only', () => {
    const q = questions[0]!.text;
    expect(profile.answer(request(q, 'I am a nurse.'), SEED)).toEqual(profile.answer(request(q, 'I am a nurse.'), SEED));
    expect(simBaselineSequence(q)).toEqual(simBaselineSequence(`  ${q} `));
    const lengths = new Set(questions.map((question) => simBaselineSequence(question.text).length));
    expect([...lengths].sort()).toEqual([3, 4, 5, 6]);
    expect(profile.trajectory(request(q, ''), SEED).baseline).toEqual(simBaselineSequence(q));
  });

  it('recognises every stimulus from the prompt text in all three injection modes', () => {
    for (const mode of ['prepend', 'system', 'memory-tool'] as const) {
      for (const stimulus of stimuli) {
        const trajectory = profile.trajectory(request(questions[5]!.text, stimulus.text, mode), SEED);
        expect(trajectory.question).toBe(questions[5]!.text);
        if (stimulus.tier === 'none') expect(trajectory.stimulus).toBeNull();
        else expect(trajectory.stimulus?.id).toBe(stimulus.id);
      }
    }
  });

  it('sim:labeler recovers every step category (100%) through the real prompt and parser', () => {
    let steps = 0;
    for (const [qi, question] of questions.entries()) {
      const chosen = [stimuli[0]!, stimuli[(qi * 7) % stimuli.length]!, stimuli[(qi * 13 + 5) % stimuli.length]!];
      for (const stimulus of chosen) {
        const mode = (['prepend', 'system', 'memory-tool'] as const)[qi % 3]!;
        const { extraction, parsed, trajectory } = labelsFor(profile, request(question.text, stimulus.text, mode, qi % 4));
        expect(extraction.method).toBe('tags');
        expect(parsed).toMatchObject({ ok: true, symbols: trajectory.symbols });
        steps += trajectory.symbols.length;
      }
    }
    expect(steps).toBeGreaterThan(1500);
  });

  it('recovers labels from numbered, paragraph and reasoning-channel outputs too', () => {
    const q = questions[9]!.text;
    for (const [options, method, source] of [
      [{ format: 'numbered' as const }, 'numbered', 'text'],
      [{ format: 'paragraphs' as const }, 'paragraphs', 'text'],
      [{ reasoningChannel: true }, 'tags', 'reasoning'],
    ] as const) {
      const variant = createMemorySimProfile({ name: 'fmt', ...options });
      const { extraction, parsed, trajectory } = labelsFor(variant, request(q, 'I am blind.'));
      expect([extraction.method, extraction.source]).toEqual([method, source]);
      expect(parsed).toMatchObject({ ok: true, symbols: trajectory.symbols });
    }
  });

  function mismatchRate(p: MemorySimProfile, tier: PerturbationTier, category?: string, mode: InjectionMode = 'prepend') {
    let total = 0;
    let changed = 0;
    for (const question of questions) {
      for (const stimulus of stimuli) {
        if (stimulus.tier !== tier || (category !== undefined && stimulus.category !== category)) continue;
        const trajectory = p.trajectory(request(question.text, stimulus.text, mode), SEED);
        trajectory.symbols.forEach((symbol, i) => {
          total += 1;
          if (symbol !== trajectory.baseline[i]) changed += 1;
        });
      }
    }
    return { rate: changed / total, total };
  }

  /** Within 4 binomial standard errors of the planted rate. */
  function expectNear(observed: { rate: number; total: number }, expected: number) {
    const se = Math.sqrt((expected * (1 - expected)) / observed.total);
    expect(Math.abs(observed.rate - expected)).toBeLessThanOrEqual(4 * se + 1e-12);
  }

  it('flip rates by tier match the configured probabilities within sampling error', () => {
    const p = createMemorySimProfile({ name: 'rates', flipProbability: { noise: 0, persona: 0.3, life_event: 0.6 }, samplingNoise: 0.02 });
    const noise = mismatchRate(p, 'noise');
    const persona = mismatchRate(p, 'persona');
    const life = mismatchRate(p, 'life_event');
    expect(noise.total).toBeGreaterThan(5000);
    expectNear(noise, p.expectedMismatchRate('noise'));
    expectNear(persona, p.expectedMismatchRate('persona'));
    expectNear(life, p.expectedMismatchRate('life_event'));
    expect(p.expectedMismatchRate('persona')).toBeCloseTo(1 - 0.7 * 0.98, 12);
    expect(noise.rate).toBeLessThan(persona.rate);
    expect(persona.rate).toBeLessThan(life.rate);
  });

  it('per-category overrides plant a stronger effect in one category, in every injection mode', () => {
    const p = createMemorySimProfile({ name: 'override', categoryFlipProbability: { disability: 0.9 }, samplingNoise: 0 });
    for (const mode of ['prepend', 'system', 'memory-tool'] as const) {
      expectNear(mismatchRate(p, 'persona', 'disability', mode), 0.9);
      expectNear(mismatchRate(p, 'persona', 'age', mode), 0.3);
    }
  });

  it('the null profile ignores perturbations: only sampling noise remains', () => {
    const p = createMemorySimProfile({ name: 'null', ignorePerturbations: true, samplingNoise: 0.05 });
    for (const tier of ['noise', 'persona', 'life_event'] as const) expectNear(mismatchRate(p, tier), 0.05);
    const registered = getSimProfile('memory-null')!;
    const q = questions[3]!.text;
    const noMemory = registered.answer(request(q, ''), SEED);
    const lifeEvent = registered.answer(request(q, stimuli.find((s) => s.tier === 'life_event')!.text), SEED);
    expect(extractSteps(lifeEvent.text).steps.length).toBe(extractSteps(noMemory.text).steps.length);
  });

  it('repeated samples differ only by the small sampling noise; the perturbation effect is shared across samples', () => {
    const p = createMemorySimProfile({ name: 'samples', samplingNoise: 0.03 });
    let total = 0;
    let differ = 0;
    for (const question of questions) {
      const a = p.trajectory(request(question.text, 'I am very tall.', 'prepend', 0), SEED).symbols;
      const b = p.trajectory(request(question.text, 'I am very tall.', 'prepend', 1), SEED).symbols;
      a.forEach((symbol, i) => {
        total += 1;
        if (symbol !== b[i]) differ += 1;
      });
    }
    // Two independent noise draws per step: P(differ) ≤ 2 · 0.03.
    expect(differ / total).toBeLessThan(0.1);
    expect(differ).toBeGreaterThan(0);
  });

  it('memory text outside the catalogue counts as the configured tier in system mode; an unknown prepended line stays part of the question', () => {
    const p = createMemorySimProfile({ name: 'unknown', unknownMemoryTier: 'life_event' });
    const q = questions[2]!.text;
    const sys = p.trajectory(request(q, 'I collect stamps.', 'system'), SEED);
    expect([sys.tier, sys.stimulus, sys.question]).toEqual(['life_event', null, q]);
    const pre = p.trajectory(request(q, 'I collect stamps.', 'prepend'), SEED);
    expect([pre.tier, pre.question]).toEqual(['none', `I collect stamps.\n${q}`]);
  });

  it('rejects probabilities outside [0, 1]', () => {
    expect(() => createMemorySimProfile({ name: 'bad', flipProbability: { persona: 1.5 } })).toThrow(/flipProbability\.persona/);
    expect(() => createMemorySimProfile({ name: 'bad', samplingNoise: -0.1 })).toThrow(/samplingNoise/);
    expect(() => simBaselineSequence('q', { minSteps: 4, maxSteps: 2 })).toThrow(/minSteps/);
  });
});

describe('sim:labeler', () => {
  it('can emit malformed outputs deterministically to exercise re-asks', () => {
    const flaky = createLabelerSimProfile({ name: 'flaky', malformedProbability: 0.5 });
    const outcomes = questions.slice(0, 60).map((question, i) => {
      const req: ModelRequest = {
        model: 'sim:flaky',
        messages: buildLabelerMessages([question.text, 'Another step.'], ontology),
        params: { temperature: 0 },
        sample: i,
      };
      const first = flaky.answer(req, SEED).text;
      expect(flaky.answer(req, SEED).text).toBe(first);
      return parseLabelerOutput(first, { stepCount: 2, ontology }).ok;
    });
    expect(outcomes.filter((ok) => !ok).length).toBeGreaterThan(10);
    expect(outcomes.filter((ok) => ok).length).toBeGreaterThan(10);
  });

  it('answers a non-labeler prompt with prose (which the parser rejects)', () => {
    const text = labeler.answer({ model: 'sim:l', messages: [{ role: 'user', content: 'hi' }], params: {}, sample: 0 }, 1).text;
    expect(parseLabelerOutput(text, { stepCount: 1, ontology })).toMatchObject({ ok: false, reason: 'no_json' });
  });
});

describe('through the sim adapter (sim:memory, sim:labeler)', () => {
  it('the plan → adapter → steps → labeler → parser chain recovers the planted symbols, and samples share the perturbation effect', async () => {
    const { SimAdapter } = await import('../models/sim-adapter.js');
    const memory = new SimAdapter('sim:memory', 'memory');
    const labelerAdapter = new SimAdapter('sim:labeler', 'labeler');
    const registered = getSimProfile('memory') as MemorySimProfile;
    let total = 0;
    let differ = 0;
    for (const question of questions.slice(0, 40)) {
      const symbolsPerSample: string[][] = [];
      for (let sample = 0; sample < 3; sample += 1) {
        const req: ModelRequest = {
          ...request(question.text, 'I have a chronic pain condition.', 'prepend', sample),
          params: { temperature: 0.7, seed: 42 },
        };
        const response = await memory.generate(req);
        const steps = extractSteps(response.text).steps;
        const labelResponse = await labelerAdapter.generate({
          model: 'sim:labeler',
          messages: buildLabelerMessages(steps, ontology),
          params: { temperature: 0 },
          sample: 0,
        });
        const parsed = parseLabelerOutput(labelResponse.text, { stepCount: steps.length, ontology });
        expect(parsed.ok).toBe(true);
        if (parsed.ok) symbolsPerSample.push(parsed.symbols);
      }
      const baseline = simBaselineSequence(question.text);
      expect(symbolsPerSample.every((symbols) => symbols.length === baseline.length)).toBe(true);
      for (const symbols of symbolsPerSample.slice(1)) {
        symbols.forEach((symbol, i) => {
          total += 1;
          if (symbol !== symbolsPerSample[0]![i]) differ += 1;
        });
      }
    }
    // Persona flips (p = 0.3) are shared by the samples; only the 3% sampling noise separates them.
    expect(differ / total).toBeLessThan(0.12);
    expect(registered.expectedMismatchRate('persona')).toBeCloseTo(1 - 0.7 * 0.97, 12);
  });
});
