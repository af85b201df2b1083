import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../src/builtin-sims.js';
import { packageRoot } from '../src/core/version.js';
import type { IntervalEstimate } from '../src/memory-drift/analysis.js';
import { memoryReport } from '../src/memory-drift/observations.js';
import { loadMemoryConfig, runMemory } from '../src/memory-drift/run.js';
import { openStore } from '../src/store/run-store.js';

/**
 * Each runnable example in examples/ delivers what its comment says. Both memory examples promise:
 * noise near the floor, persona elevated (significant), life events largest, validity pass.
 * (github-workflow.yml and github-action.yml are CI files, checked by test/action.test.ts.)
 */
describe('examples/ keep their comments’ promises', () => {
  beforeAll(() => registerBuiltinSimProfiles());

  for (const example of ['memory-sim.yaml', 'memory-materials-sim.yaml']) {
    it(`${example}: noise near the floor, persona significant, life events largest, validity pass`, async () => {
      const config = loadMemoryConfig(join(packageRoot(), 'examples', example));
      const db = join(mkdtempSync(join(tmpdir(), 'echolens-example-')), 'run.db');
      const run = await runMemory(config, db, { progress: false, signal: new AbortController().signal });
      const store = openStore(db, { readonly: true });
      const report = await memoryReport(store, run.runId);
      await store.close();
      const target = report.targets[0]!;
      const tier = (name: string) => target.metrics.dtw.tiers.find((t) => t.tier === name)?.elevation as IntervalEstimate;
      expect(target.validity.overall).toBe('pass');
      expect(tier('noise').ci[0]).toBeLessThan(0);
      expect(tier('persona').ci[0]).toBeGreaterThan(0);
      expect(tier('life_event').estimate).toBeGreaterThan(tier('persona').estimate);
    }, 600_000);
  }
});
