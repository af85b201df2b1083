import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../src/builtin-sims.js';
import { packageRoot } from '../src/core/version.js';
import type { Convergence, IntervalEstimate, TargetAnalysis } from '../src/memory-drift/analysis.js';
import { memoryReport } from '../src/memory-drift/observations.js';
import { loadMemoryConfig, runMemory } from '../src/memory-drift/run.js';
import { openStore } from '../src/store/run-store.js';

/**
 * Each runnable example in examples/ delivers what its comment says. Both memory examples promise:
 * noise near the floor (its elevation interval holds 0), persona elevated and significant, life
 * events largest, validity pass; memory-sim.yaml also that DTW and SRI rank the tiers alike.
 * (github-workflow.yml and github-action.yml are CI files: their comments' claims are checked by
 * test/action.test.ts.)
 */
describe('examples/ keep their comments’ promises', () => {
  beforeAll(() => registerBuiltinSimProfiles());

  async function runExample(example: string): Promise<TargetAnalysis> {
    const config = loadMemoryConfig(join(packageRoot(), 'examples', example));
    const db = join(mkdtempSync(join(tmpdir(), 'echolens-example-')), 'run.db');
    const run = await runMemory(config, db, { progress: false, signal: new AbortController().signal });
    const store = openStore(db, { readonly: true });
    const report = await memoryReport(store, run.runId);
    await store.close();
    expect(report.targets).toHaveLength(1);
    return report.targets[0] as TargetAnalysis;
  }

  function checkTiers(target: TargetAnalysis): void {
    // The report lists significance (30 questions or more), so the validity verdict is a real one.
    expect(target.design.underpowered).toBe(false);
    expect(target.validity.overall).toBe('pass');
    for (const metric of ['dtw', 'sri'] as const) {
      const tier = (name: string) => target.metrics[metric].tiers.find((t) => t.tier === name)?.elevation as IntervalEstimate;
      // noise near the floor: its elevation's interval holds 0
      expect(tier('noise').ci[0], metric).toBeLessThan(0);
      expect(tier('noise').ci[1], metric).toBeGreaterThan(0);
      // persona significant: elevated, interval above 0, p < 0.05
      expect(tier('persona').ci[0], metric).toBeGreaterThan(0);
      expect(tier('persona').p, metric).toBeLessThan(0.05);
      // life events largest
      expect(tier('life_event').estimate, metric).toBeGreaterThan(tier('persona').estimate);
    }
  }

  it('memory-sim.yaml: noise near the floor, persona significant, life events largest, DTW and SRI rank the tiers alike, validity pass', async () => {
    const target = await runExample('memory-sim.yaml');
    checkTiers(target);
    const convergence = target.convergence as Convergence;
    expect(convergence.tierOrder.identical).toBe(true);
    expect(convergence.tierOrder.dtw).toEqual(['noise', 'persona', 'life_event']);
  }, 600_000);

  it('memory-materials-sim.yaml: noise near the floor, persona elevated, life events most, validity pass', async () => {
    checkTiers(await runExample('memory-materials-sim.yaml'));
  }, 600_000);
});
