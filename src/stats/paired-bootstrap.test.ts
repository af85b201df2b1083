import { describe, expect, it } from 'vitest';
import { summarizeCalibration } from './calibration.js';
import { meanOfClusterMeans, type PairedUnit, pairedBootstrapDifference } from './paired-bootstrap.js';
import { rng } from './rng.js';
import { normalDraw } from './testing/normal.js';

const normal = normalDraw;

describe('pairedBootstrapDifference', () => {
  it('is the B − A difference of the statistic, reproducible under its seed', () => {
    const units: PairedUnit<number>[] = [1, 2, 3, 4, 5].map((x, i) => ({ cluster: `u${i}`, a: x, b: x + (i % 2 === 0 ? 1 : 0.5) }));
    const r = pairedBootstrapDifference(units, meanOfClusterMeans, { B: 500, seed: 7 });
    expect(r.a).toBeCloseTo(3, 12);
    expect(r.b).toBeCloseTo(3 + (3 * 1 + 2 * 0.5) / 5, 12);
    expect(r.difference).toBeCloseTo(0.8, 12);
    expect(r.ci[0]).toBeLessThan(0.8);
    expect(r.ci[1]).toBeGreaterThan(0.8);
    expect(pairedBootstrapDifference(units, meanOfClusterMeans, { B: 500, seed: 7 })).toEqual(r);
    expect(pairedBootstrapDifference(units, meanOfClusterMeans, { B: 500, seed: 8 }).ci).not.toEqual(r.ci);
    // A shift shared by both runs cancels: identical differences give a zero-width interval.
    const shifted = units.map((u, i) => ({ ...u, b: u.a + 0.25 + 0 * i }));
    const flat = pairedBootstrapDifference(shifted, meanOfClusterMeans, { B: 200 });
    expect(flat.se).toBeCloseTo(0, 12);
    expect(flat.ci[0]).toBeCloseTo(0.25, 12);
  });

  it('refuses fewer than two shared units', () => {
    expect(() => pairedBootstrapDifference([{ cluster: 'x', a: 1, b: 2 }], meanOfClusterMeans)).toThrow(/share 1 design unit/u);
    expect(() => pairedBootstrapDifference([], meanOfClusterMeans)).toThrow(/share 0 design units/u);
  });

  // Coverage of the 95% interval over simulated pairs of runs with a known B − A difference.
  const coverage = (clusters: number, perCluster: number, statistic: 'mean' | 'ratio', replicates: number, seed: number) => {
    const random = rng(seed);
    const outcomes = [];
    const truth = statistic === 'mean' ? 0.4 : 1.5 / 1 - 1.2 / 1;
    for (let r = 0; r < replicates; r++) {
      const units: PairedUnit<[number, number]>[] = [];
      for (let c = 0; c < clusters; c++) {
        const shared = normal(random); // what both runs share at this unit (its difficulty)
        for (let j = 0; j < perCluster; j++) {
          if (statistic === 'mean') {
            const within = 0.5 * normal(random);
            units.push({ cluster: `c${c}`, a: [shared + within + 0.7 * normal(random), 1], b: [shared + within + 0.4 + 0.7 * normal(random), 1] });
          } else {
            // A ratio of per-unit sums (the memory elevation μ_treat / μ_floor − 1 shape).
            const scale = Math.exp(0.3 * shared);
            const floor = scale * (1 + 0.2 * normal(random));
            units.push({ cluster: `c${c}`, a: [scale * (1.2 + 0.3 * normal(random)), floor], b: [scale * (1.5 + 0.3 * normal(random)), floor] });
          }
        }
      }
      const stat = (drawn: readonly (readonly (readonly [number, number])[])[]) => {
        if (statistic === 'mean') return meanOfClusterMeans(drawn.map((c) => c.map((u) => u[0])));
        let num = 0;
        let den = 0;
        for (const c of drawn)
          for (const u of c) {
            num += u[0];
            den += u[1];
          }
        return den > 0 ? num / den - 1 : null;
      };
      const d = pairedBootstrapDifference(units, stat, { B: 300, seed: 1000 + r });
      outcomes.push({ test: `${statistic}-${clusters}`, estimate: d.difference, truth, ci: d.ci, standardError: d.se });
    }
    return summarizeCalibration(outcomes)[0]!;
  };

  it('keeps ≥ 0.93 coverage of the true difference at 95% (6 and 30 clusters, means and ratios)', { timeout: 120_000 }, () => {
    for (const [clusters, perCluster, statistic] of [
      [6, 3, 'mean'],
      [30, 1, 'mean'],
      [30, 4, 'ratio'],
    ] as const) {
      const c = coverage(clusters, perCluster, statistic, 500, clusters * 17 + perCluster);
      console.log(`paired bootstrap coverage: ${statistic}, ${clusters} clusters × ${perCluster}: ${c.coverage?.rate} (MC SE ${c.coverage?.mcSE.toFixed(3)})`);
      expect(c.coverage?.rate, `${statistic}, ${clusters} clusters`).toBeGreaterThanOrEqual(0.93);
      expect(c.coverage?.rate, `${statistic}, ${clusters} clusters (not vacuous)`).toBeLessThanOrEqual(0.99);
    }
  });
});
