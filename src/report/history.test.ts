import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinAudits } from '../audits.js';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { continuationConfigSchema } from '../continuation/config.js';
import { runContinuation } from '../continuation/run.js';
import { packageRoot } from '../core/version.js';
import { memoryConfigSchema } from '../memory-drift/config.js';
import { runMemory } from '../memory-drift/run.js';
import { openStore } from '../store/run-store.js';
import { baselinePairs, compareToBaseline, storeHistory } from './history.js';

/**
 * Memory and continuation through the same over-time path as persona (the audits' `overTime`
 * members; no shared code names an audit): a design measured twice (`fresh: true` in the config),
 * its history, and the unit-by-unit comparison with the first measurement.
 */

const SESSION = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
const CROSS = join(packageRoot(), 'data', 'demo', 'codex-session.jsonl');

let dir: string;
beforeAll(() => {
  registerBuiltinSimProfiles();
  registerBuiltinAudits();
  dir = mkdtempSync(join(tmpdir(), 'echolens-history-audits-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function checkTwoMeasurements(db: string, unit: string) {
  const store = openStore(db, { readonly: true });
  try {
    const [design] = await storeHistory(store);
    expect(design?.runs).toHaveLength(2);
    for (const run of design?.runs ?? []) {
      expect(run.headlines.length).toBeGreaterThan(0);
      expect(run.headlines.every((h) => h.estimate !== null && Number.isFinite(h.estimate))).toBe(true);
    }
    const [first, second] = design?.runs ?? [];
    // The second measurement holds cells of its own.
    const keys = async (id: string) => new Set((await store.cellsOfRun(id)).map((c) => c.key));
    const a = await keys(first?.run as string);
    expect([...(await keys(second?.run as string))].filter((k) => a.has(k))).toEqual([]);
    const { pairs } = await baselinePairs(store, { baseline: 'first' });
    expect(pairs).toHaveLength(1);
    const comparison = await compareToBaseline(store, pairs[0] as (typeof pairs)[number]);
    expect(comparison.rows.length).toBeGreaterThan(0);
    for (const row of comparison.rows) {
      expect(row.unit).toBe(unit);
      expect(row.units).toBeGreaterThan(0);
      if ('error' in row.change) throw new Error(row.change.error);
      expect(row.change.p).toBeGreaterThan(0);
      expect(row.change.p).toBeLessThanOrEqual(1);
      // One procedure: the p agrees with the interval.
      const outside = row.change.ci[0] > 0 || row.change.ci[1] < 0;
      expect(outside).toBe(row.change.p <= 0.05);
    }
  } finally {
    await store.close();
  }
}

describe('drift over time through the Audit protocol', () => {
  it('memory: two measurements of one design, compared question by question', async () => {
    const db = join(dir, 'memory.db');
    const base = { targets: ['sim:memory'], labeler: 'sim:labeler', questions: { limit: 8 }, conditions: ['filler', 'age'], k: 2, analysis: { B: 200 } };
    await runMemory(memoryConfigSchema.parse(base), db, { progress: false });
    await runMemory(memoryConfigSchema.parse({ ...base, fresh: true }), db, { progress: false });
    await checkTwoMeasurements(db, 'question');
  }, 120_000);

  it('continuation: two measurements of one design, compared cutpoint by cutpoint', async () => {
    const db = join(dir, 'continuation.db');
    // The re-measurement's salt comes from the clock, and the simulated target completes both arms
    // at only some cutpoints: 8 cutpoints shared 1-5 over 25 salts (0 now and then), 24 share 9-13.
    const base = { session: SESSION, crossSession: CROSS, targets: ['sim:continuation'], cutpoints: { count: 24 }, windowTokens: 1000 };
    await runContinuation(continuationConfigSchema.parse(base), db, { progress: false });
    await runContinuation(continuationConfigSchema.parse({ ...base, fresh: true }), db, { progress: false });
    await checkTwoMeasurements(db, 'cutpoint');
  }, 120_000);
});
