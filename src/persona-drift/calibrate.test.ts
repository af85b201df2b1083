import { describe, expect, it } from 'vitest';
import { rng } from '../stats/rng.js';
import { calibratePersona, DEFAULT_VARIANCE, simulateRun } from './calibrate.js';
import { renderCalibrationText } from './calibrate-text.js';
import { BASE_DESIGN, REFERENCE_DESIGNS } from './calibrate-designs.js';

const find = (tests: ReturnType<typeof calibratePersona>['tests'], prefix: string) => {
  const row = tests.find((t) => t.test.startsWith(prefix));
  if (!row) throw new Error(`no test starting with "${prefix}"`);
  return row;
};

describe('persona calibrate (small replicate counts)', () => {
  it('recovers a planted drift gap in sign and size, with power and an MDE', () => {
    const result = calibratePersona(BASE_DESIGN, { replicates: 60, worlds: ['null', 'drift'], effect: 0.6, seed: 3 });
    const headline = find(result.tests, 'drift target=');
    expect(headline.plantedReplicates).toBe(60);
    expect(headline.plantedMean).toBeGreaterThan(0.5);
    expect(headline.plantedMean).toBeLessThan(0.7);
    expect(headline.power?.rate).toBeGreaterThan(0.8);
    expect(headline.mde).toBeGreaterThan(0.1);
    expect(headline.mde).toBeLessThan(0.6);
  });

  it('recovers a planted mitigation effect against control and placebo, and leaves the placebo contrast null', () => {
    const design = REFERENCE_DESIGNS['three mitigations with placebo']!;
    const result = calibratePersona(design, { replicates: 40, worlds: ['mitigation'], effect: 0.6, seed: 5 });
    const anchor = find(
      result.tests,
      'mitigation target=sim:target judge=sim:judge prompt=probe-reference arm=real mitigation=a-anchor distance=d0 surface=probe category=coding_self − none',
    );
    expect(anchor.plantedMean).toBeGreaterThan(0.5);
    expect(anchor.plantedMean).toBeLessThan(0.7);
    const placebo = find(result.tests, 'mitigation target=sim:target judge=sim:judge prompt=probe-reference arm=real mitigation=placebo_iso_recipe');
    expect(placebo.nullReplicates).toBe(40);
    expect(placebo.plantedReplicates).toBe(0);
  });

  it('says when three sessions cannot support a session-level claim', () => {
    const result = calibratePersona(REFERENCE_DESIGNS['three sessions']!, { replicates: 20, worlds: ['null', 'drift'], effect: 1 });
    const headline = find(result.tests, 'drift target=');
    expect(headline.power?.rate).toBe(0);
    expect(headline.mde).toBeNull();
    expect(headline.note).toMatch(/cannot reach p < 0.05/);
  });

  it('recovers a planted far − d0 distance effect and a system-prompt contrast', () => {
    const far = calibratePersona(REFERENCE_DESIGNS['d0 + far']!, { replicates: 30, worlds: ['distance'], effect: 0.6, seed: 9 });
    const distance = find(far.tests, 'distance far − d0');
    expect(distance.plantedMean).toBeGreaterThan(0.45);
    expect(distance.plantedMean).toBeLessThan(0.75);
    const prompts = calibratePersona(REFERENCE_DESIGNS['two system prompts']!, { replicates: 30, worlds: ['prompt'], effect: 0.6, seed: 9 });
    const prompt = find(prompts.tests, 'prompt format-strict − probe-reference');
    expect(prompt.plantedMean).toBeGreaterThan(0.45);
    expect(prompt.plantedMean).toBeLessThan(0.75);
  });

  it("simulates forks: per unit, a fork is its parent's unit; with shared draws its pre-fork answers are its parent's", () => {
    const design = { ...BASE_DESIGN, sessions: 4, forks: 2, forkAt: 0.5 };
    const effects = { fixed: () => 0, compactionShift: 0 };
    const perUnit = simulateRun(design, DEFAULT_VARIANCE, effects, rng(1), 'per-unit').observations;
    expect(new Set(perUnit.map((o) => o.session))).toEqual(new Set(['session-01', 'session-02']));
    const shared = simulateRun(design, DEFAULT_VARIANCE, effects, rng(1), 'shared').observations;
    expect(new Set(shared.map((o) => o.session)).size).toBe(4);
    const at = (session: string, position: string) => shared.filter((o) => o.session === session && o.position === position).map((o) => o.scores['sim:judge']);
    // session-03 forks session-01: identical before the fork point (6 of 12 positions), its own after.
    expect(at('session-03', 'P00')).toEqual(at('session-01', 'P00'));
    expect(at('session-03', 'P05')).toEqual(at('session-01', 'P05'));
    expect(at('session-03', 'P06')).not.toEqual(at('session-01', 'P06'));
  });

  it('shows the inflated false-positive rate of shared draws on a forked design, and the nominal one per unit', () => {
    const design = { ...BASE_DESIGN, sessions: 8, forks: 4 };
    const shared = calibratePersona(design, { replicates: 40, worlds: ['null'], seed: 2, draws: 'shared' });
    const perUnit = calibratePersona(design, { replicates: 40, worlds: ['null'], seed: 2 });
    const sharedHeadline = find(shared.tests, 'drift target=');
    const perUnitHeadline = find(perUnit.tests, 'drift target=');
    expect(sharedHeadline.fpr!.rate).toBeGreaterThan(0.05 + 2 * sharedHeadline.fpr!.mcSE);
    expect(sharedHeadline.fprWithinNominal).toBe(false);
    // Four units remain: the sign-flip test cannot reject, and the report says so.
    expect(perUnitHeadline.fpr!.rate).toBe(0);
    expect(perUnitHeadline.note).toMatch(/cannot reach p < 0.05/);
    expect(renderCalibrationText(shared)).toMatch(/SHARED draws/);
    expect(renderCalibrationText(perUnit)).toMatch(/analysed as its parent's unit, as persona run does: 4 units/);
    expect(() => calibratePersona({ ...BASE_DESIGN, sessions: 8, forks: 5 }, { replicates: 1 })).toThrow(/forks/);
  });

  it('is reproducible for a seed and refuses bad knobs', () => {
    const a = calibratePersona(BASE_DESIGN, { replicates: 5, worlds: ['null'], seed: 11 });
    const b = calibratePersona(BASE_DESIGN, { replicates: 5, worlds: ['null'], seed: 11 });
    expect(a).toEqual(b);
    expect(() => calibratePersona(BASE_DESIGN, { replicates: 0 })).toThrow(/replicates/);
    expect(() => calibratePersona(BASE_DESIGN, { variance: { withinCell: -1 } })).toThrow(/withinCell/);
  });
});
