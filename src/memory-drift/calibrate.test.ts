import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { openStore } from '../store/run-store.js';
import { withinNominal } from '../stats/calibration.js';
import { calibrateMemoryDesign, NULL_SCENARIO, PLANTED_SCENARIO, prepareDesign, simulateDesignSamples } from './calibrate.js';
import { memoryConfigSchema } from './config.js';
import { sharedSeedCells } from './plan.js';
import { collectMemorySamples, memoryReport } from './observations.js';
import { resolveMemoryStimuli, runMemory } from './run.js';
import { seededSimSymbols } from './sim.js';

// The default config: every built-in question, every condition, k = 1, `cell` seeding,
// reference pairing. The sampler honours seeds (same seed + same question = same answer).
const defaults = memoryConfigSchema.parse({ targets: ['sim:memory-seeded-null'], labeler: 'sim:labeler' });
const stimuli = await resolveMemoryStimuli(defaults);

describe('memory calibration at the default config (seed-honouring sampler)', () => {
  it('keeps every sample of a (target, question) on its own seed', () => {
    const design = prepareDesign(defaults, stimuli);
    simulateDesignSamples(design, { scenario: NULL_SCENARIO, replicate: 0, seed: 1 });
    const seeds = design.cells.map((c) => ({ seed: c.request.params.seed, target: 'x', question: String(c.labels.question_id) }));
    expect(sharedSeedCells(seeds)).toBe(0);
  });

  it('holds the false-positive rate at 5% under a complete null over 200 runs, and BH keeps the family-wise rate at alpha', () => {
    const calibration = calibrateMemoryDesign(defaults, stimuli, { replicates: 200, B: 100, seed: 7, scenarios: [NULL_SCENARIO] });
    const null_ = calibration.scenarios[0]!;
    // Runs are the unit: the per-run share of per-condition tests below 0.05, averaged.
    const { mean, mcSE } = null_.perConditionShare;
    expect(Math.abs(mean - 0.05)).toBeLessThanOrEqual(3 * mcSE + 0.005);
    expect(mean).toBeLessThanOrEqual(0.05 + 2 * mcSE);
    expect(withinNominal(null_.dRelFamilyWise, 0.05)).toBe(true);
    expect(withinNominal(null_.pairwiseFamilyWise, 0.05)).toBe(true);
    // Every single test stays within Monte Carlo error of its nominal level (3 SE: 200+ tests are checked).
    for (const test of null_.tests) {
      expect(test.refused, test.test).toBe(0);
      expect(withinNominal(test.rejection!, 0.05, 3), `${test.test} ${test.rejection!.rate}`).toBe(true);
    }
    const coverages = null_.tests.filter((t) => t.coverage !== null).map((t) => t.coverage!.rate);
    expect(coverages.reduce((a, b) => a + b, 0) / coverages.length).toBeGreaterThanOrEqual(0.93);
  }, 900_000);

  it('still recovers the planted tiers', () => {
    const calibration = calibrateMemoryDesign(defaults, stimuli, { replicates: 10, B: 100, seed: 9, scenarios: [PLANTED_SCENARIO] });
    const planted = calibration.scenarios[0]!;
    const rate = (name: string) => planted.tests.find((t) => t.test === name)!.rejection!.rate;
    for (const metric of ['dtw', 'sri']) {
      expect(rate(`${metric}/elevation/tier:life_event`)).toBe(1);
      expect(rate(`${metric}/elevation/tier:persona`)).toBe(1);
      // Noise plants nothing: its pooled elevation is not flagged more than chance allows.
      expect(rate(`${metric}/elevation/tier:noise`)).toBeLessThanOrEqual(0.3);
      const lifeEventDRel = planted.tests.filter((t) => t.test.startsWith(`${metric}/dRel/`) && t.rejection !== null);
      expect(lifeEventDRel.length).toBeGreaterThan(0);
    }
    expect(planted.dRelFamilyWise.rate).toBe(1);
  }, 300_000);
});

describe('end to end through the real plan, seeds, sampler and labeler (SIMULATED)', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-memory-calibrate-'));
  const small = (sampleSeeds: string) =>
    memoryConfigSchema.parse({
      targets: ['sim:memory-seeded-null'],
      labeler: 'sim:labeler',
      questions: { limit: 30 },
      conditions: ['filler', 'whitespace', 'punctuation', 'disability', 'job_loss'],
      k: 1,
      sampleSeeds,
      analysis: { B: 300 },
    });
  const runAndReport = async (sampleSeeds: string) => {
    registerBuiltinSimProfiles();
    const db = join(dir, `${sampleSeeds}.db`);
    const result = await runMemory(small(sampleSeeds), db, { progress: false, signal: new AbortController().signal });
    const store = openStore(db, { readonly: true });
    try {
      return {
        report: await memoryReport(store, result.runId),
        collection: await collectMemorySamples(store, result.runId),
        cells: await store.cellsOfRun(result.runId),
      };
    } finally {
      await store.close();
    }
  };

  it('cell seeds: every sample independent, the seeded sampler is what the calibration simulates, no spurious elevation', async () => {
    const { report, collection, cells } = await runAndReport('cell');
    expect(report.sampling).toMatchObject({ seeding: 'cell', sharedSeedCells: 0, independent: true });
    // The real sampler's answers are seededSimSymbols of (seed, question text): the calibration's model.
    const byKey = new Map(cells.map((c) => [c.key, c]));
    for (const record of collection.records.slice(0, 40)) {
      const cell = byKey.get(record.generationKey)!;
      const question = cell.request.messages.at(-1)!.content.split('\n').at(-1)!.trim();
      const drawn = seededSimSymbols({ question, memory: '', flipProbability: 0, seed: cell.request.params.seed!, samplingNoise: 0.2 });
      expect(record.sample.symbols).toEqual(drawn.symbols);
    }
    const target = report.targets[0]!;
    expect(target.design.underpowered).toBe(false);
    // Perturbed arms are no longer more stable than the floor by construction (offset: −100 %).
    const elevations = target.metrics.dtw.conditions.flatMap((c) => (c.elevation === null || 'error' in c.elevation ? [] : [c.elevation.estimate]));
    expect(elevations).toHaveLength(5);
    for (const e of elevations) expect(Math.abs(e)).toBeLessThan(0.35);
    expect(Math.abs(elevations.reduce((a, b) => a + b, 0) / elevations.length)).toBeLessThan(0.15);
  });

  it('offset seeds (the old default) make perturbed sample 0 repeat the reference, and the report says so', async () => {
    const { report } = await runAndReport('offset');
    expect(report.sampling!.seeding).toBe('offset');
    expect(report.sampling!.independent).toBe(false);
    expect(report.sampling!.note).toMatch(/share a seed/);
    const conditions = report.targets[0]!.metrics.dtw.conditions.filter((c) => c.tier !== 'none');
    for (const c of conditions) expect(c.mean).toBe(0);
  });
});
