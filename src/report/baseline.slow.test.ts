import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerBuiltinAudits } from '../audits.js';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { personaAudit } from '../persona-drift/audit.js';
import { smallPersonaConfig } from '../persona-drift/testing/small-config.js';
import { runAudit } from '../experiment/run-audit.js';
import { resolveRegisteredGate } from '../gate/registered.js';
import { baselineGate } from '../gate/baseline.js';
import { rng } from '../stats/rng.js';
import { openStore } from '../store/run-store.js';
import { changeFails, compareSeries } from './baseline.js';
import type { AuditSeries } from './compare-types.js';
import { baselinePairs, compareToBaseline } from './history.js';
import { normalDraw as normal } from '../stats/testing/normal.js';

/**
 * Calibration of the baseline comparison (docs/statistics.md, "Change from a baseline"): with no
 * change between two measurements the gate passes in at least 95% of seeded replicates, and with a
 * planted change the interval covers it at its level, over designs like the audits' own.
 */

interface Design {
  name: string;
  clusters: number;
  perCluster: number;
  /** SD of the clusters' and units' true values (shared by both measurements). */
  clusterSd: number;
  unitSd: number;
  /** Measurement noise of one unit value. */
  noise: (r: ReturnType<typeof rng>, unit: number) => number;
}

const DESIGNS: Design[] = [
  // One session, eight positions (persona with one transcript): judge-score gaps on a 0–3 scale.
  { name: 'persona: 1 session × 8 positions', clusters: 1, perCluster: 8, clusterSd: 0, unitSd: 0.6, noise: (r) => 0.5 * normal(r) },
  // Eight sessions of three positions, a session effect, heavy tails.
  {
    name: 'persona: 8 sessions × 3 positions, t-like noise',
    clusters: 8,
    perCluster: 3,
    clusterSd: 0.5,
    unitSd: 0.3,
    noise: (r) => (0.4 * normal(r)) / Math.sqrt(0.5 + r.next()),
  },
  // 25 cutpoints, fidelity differences with skewed noise.
  {
    name: 'continuation: 25 cutpoints, skewed noise',
    clusters: 25,
    perCluster: 1,
    clusterSd: 0.2,
    unitSd: 0,
    noise: (r) => -Math.log(1 - r.next()) * 0.3 - 0.3,
  },
  // 12 questions, noise that differs tenfold between questions.
  {
    name: 'memory: 12 questions, heteroscedastic',
    clusters: 12,
    perCluster: 1,
    clusterSd: 0.1,
    unitSd: 0,
    noise: (r, u) => (0.02 + 0.2 * (u % 4)) * normal(r),
  },
];

function measure(design: Design, r: ReturnType<typeof rng>, truth: number[], shift: number): AuditSeries {
  const units = truth.map((mu, u) => ({ key: `u${u}`, cluster: `c${Math.floor(u / design.perCluster)}`, value: mu + shift + design.noise(r, u) }));
  return { statistic: 's', subject: 't', unit: 'unit', scale: 'number', estimate: null, ci: null, units };
}

describe('baseline comparison calibration (Monte Carlo)', () => {
  it('holds its level with no change (gate passes ≈ 95%+) and covers a planted change at 95%, in every design, within Monte Carlo error', () => {
    const replicates = 4000;
    // Three Monte Carlo SEs of a proportion near 0.95 over these replicates: an exact test with 8 units
    // rejects 12/256 = 4.7% of the time, so its pass rate is 0.953 in expectation, not more.
    const margin = 3 * Math.sqrt((0.05 * 0.95) / replicates);
    const lines: string[] = [];
    for (const [d, design] of DESIGNS.entries()) {
      const r = rng(1000 + d);
      let passes = 0;
      let covered = 0;
      for (let k = 0; k < replicates; k++) {
        const truth: number[] = [];
        for (let c = 0; c < design.clusters; c++) {
          const ce = design.clusterSd * normal(r);
          for (let u = 0; u < design.perCluster; u++) truth.push(ce + design.unitSd * normal(r));
        }
        const [same] = compareSeries([measure(design, r, truth, 0)], [measure(design, r, truth, 0)], { seed: k, B: 2000 });
        if (same && !changeFails(same, 0)) passes++;
        const [shifted] = compareSeries([measure(design, r, truth, 0)], [measure(design, r, truth, 0.4)], { seed: k, B: 2000 });
        if (shifted && !('error' in shifted.change) && shifted.change.ci[0] <= 0.4 && 0.4 <= shifted.change.ci[1]) covered++;
      }
      lines.push(`${design.name}: pass ${(passes / replicates).toFixed(3)}, coverage ${(covered / replicates).toFixed(3)}`);
      expect(passes / replicates, design.name).toBeGreaterThanOrEqual(0.95 - margin);
      expect(covered / replicates, design.name).toBeGreaterThanOrEqual(0.95 - margin);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }, 600_000);

  it('end to end: two simulated persona measurements of one design with no change pass the baseline gate at 95% within Monte Carlo error (seeded replicates)', async () => {
    registerBuiltinSimProfiles();
    registerBuiltinAudits();
    const dir = mkdtempSync(join(tmpdir(), 'echolens-baseline-cal-'));
    const replicates = 60;
    let passes = 0;
    let moved = 0;
    try {
      for (let k = 0; k < replicates; k++) {
        const db = join(dir, `r${k}.db`);
        // The same config (seed k) measured three times. A design's first measurement has no salt, so a
        // simulated model draws it from the request seed alone: the same draw in every replicate, not a
        // random one. The two fresh measurements each draw anew from their salt, so they are
        // exchangeable, as two measurements of an unchanged real model are; the gate compares them.
        // sim:persona plants a drift of the same size in both: the gap varies from draw to draw, its change is zero.
        const config = smallPersonaConfig({ seed: k, positions: [{ uniform: 8 }], targets: ['sim:persona'] });
        // A fixed clock per replicate: the salts derive from the measurement time, so the draws (and the result) are seeded.
        const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1) + k * 86_400_000 + minutes * 60_000);
        await runAudit(personaAudit, config, db, { runtime: { progress: false }, measurement: { now: at(0) } });
        await runAudit(personaAudit, config, db, { runtime: { progress: false }, measurement: { fresh: true, tag: 'base', now: at(1) } });
        await runAudit(personaAudit, config, db, { runtime: { progress: false }, measurement: { fresh: true, now: at(2) } });
        const store = openStore(db, { readonly: true });
        try {
          const { pairs } = await baselinePairs(store, { baseline: 'base' });
          const comparisons = await Promise.all(pairs.map((p) => compareToBaseline(store, p, { seed: k })));
          const change = comparisons[0]?.rows[0]?.change;
          // The second measurement drew anew: its gap differs from the first's.
          if (change && !('error' in change) && change.estimate !== 0) moved++;
          const result = baselineGate(comparisons, 0, resolveRegisteredGate(), true);
          if (result.verdict === 'pass') passes++;
        } finally {
          await store.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    process.stdout.write(`end-to-end persona (sim:persona, 8 positions): ${passes}/${replicates} passed, ${moved} with a non-zero change\n`);
    expect(moved).toBeGreaterThan(replicates / 2);
    // 60 end-to-end replicates: a true 95% pass rate gives 57 ± 1.7; two Monte Carlo SE below 0.95 is the floor.
    expect(passes / replicates).toBeGreaterThanOrEqual(0.95 - 2 * Math.sqrt((0.95 * 0.05) / replicates));
  }, 900_000);
});
