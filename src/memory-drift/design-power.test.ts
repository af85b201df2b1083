import { describe, expect, it } from 'vitest';
import { minimumDetectableEffect } from '../stats/calibration.js';
import { MIN_QUESTIONS } from './analysis.js';
import { calibrateMemoryDesign, dryRunReplicates, type MemoryDesignPower, memoryDesignPower, memoryPowerLine } from './calibrate.js';
import { memoryConfigSchema } from './config.js';
import { resolveMemoryStimuli } from './run.js';

const config = memoryConfigSchema.parse({ targets: ['sim:memory'], labeler: 'sim:labeler', questions: { limit: 8 } });
const stimuli = await resolveMemoryStimuli(config);

describe("the memory dry run's power figures", () => {
  it('are memory calibrate’s figures for the verdict’s tests at the same replicates, bootstrap and seed', () => {
    const power = memoryDesignPower(config, stimuli, { replicates: 4, B: 40, seed: 5, minQuestions: MIN_QUESTIONS });
    const calibration = calibrateMemoryDesign(config, stimuli, { replicates: 4, B: 40, seed: 5 });
    const test = (scenario: string, name: string) => calibration.scenarios.find((s) => s.scenario.name === scenario)!.tests.find((t) => t.test === name)!;
    expect(power.metrics.map((m) => m.metric)).toEqual(['dtw', 'sri']);
    for (const m of power.metrics) {
      const life = `${m.metric}/elevation/tier:life_event`;
      expect(m.power).toEqual(test('planted', life).rejection);
      expect(m.mde).toBeCloseTo(minimumDetectableEffect(test('null', life).meanStandardError!, { alpha: 0.05 }), 12);
      expect(m.noiseFalsePositive).toEqual(test('null', `${m.metric}/elevation/tier:noise`).rejection);
      expect(m.plantedElevation).toBeGreaterThan(0);
    }
    // 8 questions: below the rule, so underpowered whatever the simulated power, and told to add questions.
    expect(power.questions).toBe(8);
    expect(power.underpowered).toBe(true);
    expect(power.neededQuestions).toBeGreaterThanOrEqual(MIN_QUESTIONS);
    const line = memoryPowerLine(power, MIN_QUESTIONS);
    expect(line).toMatch(/^power: UNDERPOWERED — 8 questions, below the 30-question rule/u);
    expect(line).toContain(`run at least ${power.neededQuestions}`);
    expect(line).toMatch(/minimum detectable elevation ≈ \d+% \(dtw\), \d+% \(sri\) at 80% power/u);
    expect(line).toContain('--replicates 4 --bootstrap 40 --seed 5');
  }, 120_000);

  it('says UNDERPOWERED with the questions to add when power at the planted effect is below 80%, else adequately powered', () => {
    const base: MemoryDesignPower = {
      questions: 40,
      replicates: 8,
      B: 100,
      seed: 1,
      alpha: 0.05,
      metrics: [
        { metric: 'dtw', mde: 0.4, power: { rate: 0.5, mcSE: 0.18, n: 8 }, plantedElevation: 0.2, noiseFalsePositive: { rate: 0, mcSE: 0, n: 8 } },
        { metric: 'sri', mde: 0.1, power: { rate: 1, mcSE: 0, n: 8 }, plantedElevation: 0.2, noiseFalsePositive: { rate: 0.125, mcSE: 0.12, n: 8 } },
      ],
      underpowered: true,
      neededQuestions: 160,
    };
    const low = memoryPowerLine(base, MIN_QUESTIONS);
    expect(low).toMatch(/^power: 40 questions: sensitivity/u);
    expect(low).toContain('power 0.50 (dtw), 1.00 (sri)');
    expect(low).toContain('falsely elevated in 0 of 8 (dtw), 1 of 8 (sri) null runs');
    expect(low).toMatch(/UNDERPOWERED — about 160 questions would reach 80%/u);
    const ok = memoryPowerLine({ ...base, underpowered: false, neededQuestions: null }, MIN_QUESTIONS);
    expect(ok).toMatch(/adequately powered$/u);
    expect(ok).not.toContain('UNDERPOWERED');
  });

  it('simulates fewer runs for large grids, never fewer than 4', () => {
    expect(dryRunReplicates(1470)).toBe(8);
    expect(dryRunReplicates(3000)).toBe(4);
    expect(dryRunReplicates(1_000_000)).toBe(4);
  });
});
