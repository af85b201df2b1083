import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import '../models/sim-echo.js';
import { openStore } from '../store/run-store.js';
import type { CellSpec } from '../store/types.js';
import type { AuditRunner } from './audit.js';
import { decideMeasurement, designIdOf, measurementOf, parseDuration, runsOfDesign } from './measurement.js';
import { runAudit } from './run-audit.js';

interface EchoConfig {
  n: number;
  fresh?: boolean;
}
// Two stages of echo cells: every cell's `cached` flag says whether the store answered it.
const echo: AuditRunner<EchoConfig, number[], { cached: number; called: number }> = {
  name: 'echo-measure',
  limits: () => ({}),
  prepare: async (config) => Array.from({ length: config.n }, (_, i) => i),
  plan: (_c, items): CellSpec[] =>
    items.map((i) => ({ request: { model: 'sim:echo', messages: [{ role: 'user', content: `item ${i}` }], params: {}, sample: 0 }, labels: { item: i } })),
  manifestOptions: () => ({}),
  stages: (_c, _i, specs) => [{ name: 'cells', expected: specs.length }],
  async execute({ specs, stage }) {
    const r = await stage(specs, 'cells');
    return { cached: r.results.filter((x) => x.cached).length, called: r.results.filter((x) => !x.cached).length };
  },
};

let dir: string;
let db: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'echolens-measure-'));
  db = join(dir, 'm.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const quiet = { runtime: { progress: false } };

describe('measurements: a run with a time', () => {
  it('resumes by default, measures anew with fresh (new run, new keys, earlier run kept), and resumes the latest after', async () => {
    const first = await runAudit(echo, { n: 3 }, db, quiet);
    expect(first.result).toEqual({ cached: 0, called: 3 });
    expect(first.runId).toBe(designIdOf('echo-measure', { n: 3 }));
    const again = await runAudit(echo, { n: 3 }, db, quiet);
    expect(again).toMatchObject({ runId: first.runId, resumed: true, result: { cached: 3, called: 0 } });
    const fresh = await runAudit(echo, { n: 3 }, db, { ...quiet, measurement: { fresh: true, tag: 'v2' } });
    expect(fresh.runId).not.toBe(first.runId);
    expect(fresh.result).toEqual({ cached: 0, called: 3 });
    // The config's `fresh: true` is a measurement of the same design, not another design.
    const byConfig = await runAudit(echo, { n: 3, fresh: true }, db, quiet);
    expect(byConfig.result).toEqual({ cached: 0, called: 3 });
    const plain = await runAudit(echo, { n: 3 }, db, quiet);
    expect(plain).toMatchObject({ runId: byConfig.runId, resumed: true, result: { cached: 3, called: 0 } });
    const store = openStore(db, { readonly: true });
    try {
      const runs = runsOfDesign(await store.listRuns(), first.runId);
      expect(runs.map((r) => r.id)).toEqual([first.runId, fresh.runId, byConfig.runId]);
      const [m0, m1] = runs.map(measurementOf);
      expect(m0).toMatchObject({ designId: first.runId, tag: null, salt: null });
      expect(m1).toMatchObject({ designId: first.runId, tag: 'v2' });
      expect(m1?.salt).toMatch(/^[0-9a-f]{10}$/);
      // Each measurement holds its own three cells.
      const keys = await Promise.all(runs.map(async (r) => new Set((await store.cellsOfRun(r.id)).map((c) => c.key))));
      expect(keys.map((k) => k.size)).toEqual([3, 3, 3]);
      expect([...(keys[0] as Set<string>)].some((k) => keys[1]?.has(k))).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('--max-age measures anew only when the latest measurement is older', async () => {
    const first = await runAudit(echo, { n: 2 }, db, quiet);
    const young = await runAudit(echo, { n: 2 }, db, { ...quiet, measurement: { maxAgeMs: parseDuration('1h') } });
    expect(young).toMatchObject({ runId: first.runId, result: { cached: 2 } });
    const later = new Date(Date.now() + 2 * 3600_000);
    const old = await runAudit(echo, { n: 2 }, db, { ...quiet, measurement: { maxAgeMs: parseDuration('1h'), now: later } });
    expect(old.runId).not.toBe(first.runId);
    expect(old.result).toEqual({ cached: 0, called: 2 });
  });

  it('parses durations and refuses bad ones and bad tags', () => {
    expect(parseDuration('7d')).toBe(7 * 86_400_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(() => parseDuration('7 days')).toThrow(/--max-age/);
    expect(() => decideMeasurement('d', [], { tag: 'no spaces' })).toThrow(/--tag/);
  });

  it('refuses a tag on a command that resumes (the tag would be lost), accepts the same tag again', async () => {
    await runAudit(echo, { n: 1 }, db, { ...quiet, measurement: { tag: 'v1' } });
    await expect(runAudit(echo, { n: 1 }, db, { ...quiet, measurement: { tag: 'v2' } })).rejects.toThrow(/add --fresh/);
    const same = await runAudit(echo, { n: 1 }, db, { ...quiet, measurement: { tag: 'v1' } });
    expect(same.resumed).toBe(true);
  });
});
