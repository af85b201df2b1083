import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { bootstrapCI } from './bootstrap.js';
import { clusterBootstrap } from './cluster-bootstrap.js';
import { bootstrapPValue, quantileLinear } from './resampling-common.js';
import { type Rng, rng } from './rng.js';

const golden = JSON.parse(readFileSync(new URL('./__fixtures__/golden-resampling.json', import.meta.url), 'utf8')).quantiles as {
  values: number[];
  q: number[];
  quantiles: number[];
}[];

function normal(r: Rng): number {
  let u = 0;
  while (u === 0) u = r.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r.next());
}
const mean = (v: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] as number;
  return s / v.length;
};

describe('quantileLinear (type 7)', () => {
  it.each(golden.map((c, i) => [i, c] as const))('matches numpy.quantile #%i', (_, c) => {
    c.q.forEach((q, j) => {
      const expected = c.quantiles[j] as number;
      expect(Math.abs(quantileLinear(c.values, q) - expected)).toBeLessThanOrEqual(1e-9 * Math.abs(expected) + 1e-15);
    });
  });

  it('rejects an empty sample and p outside [0, 1]', () => {
    expect(() => quantileLinear([], 0.5)).toThrow(StatisticsError);
    expect(() => quantileLinear([1, 2], 1.5)).toThrow(InvalidArgumentError);
  });
});

describe('bootstrapPValue', () => {
  it('is min(1, 2·min(#≤0 + 1, #≥0 + 1)/(B + 1))', () => {
    expect(bootstrapPValue(Float64Array.from([1, 2, 3, 4]))).toBeCloseTo(2 / 5, 15);
    expect(bootstrapPValue(Float64Array.from([-1, 2, 3, 4, 5]))).toBeCloseTo((2 * 2) / 6, 15);
    expect(bootstrapPValue(Float64Array.from([-1, 2, 3, 0]))).toBe(1); // 2·3/5 capped at 1
    expect(bootstrapPValue(Float64Array.from([-1, 1]))).toBe(1);
  });
});

describe('bootstrapCI', () => {
  it('a 95% percentile CI of the mean covers the true mean 93–97% of the time (1,000 normal samples of 100, B = 1,000)', () => {
    const r = rng(20261130);
    let covered = 0;
    const sims = 1000;
    for (let s = 0; s < sims; s++) {
      const x = Array.from({ length: 100 }, () => 2 + normal(r));
      const { ci } = bootstrapCI(x, mean, { B: 1000, seed: s });
      if (ci[0] <= 2 && 2 <= ci[1]) covered++;
    }
    expect(covered / sims).toBeGreaterThanOrEqual(0.93);
    expect(covered / sims).toBeLessThanOrEqual(0.97);
  }, 120_000);

  it('is exactly reproducible for a seed; another seed gives other replicates', () => {
    const x = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5];
    const a = bootstrapCI(x, mean, { B: 500, seed: 7 });
    const b = bootstrapCI(x, mean, { B: 500, seed: 7 });
    const c = bootstrapCI(x, mean, { B: 500, seed: 8 });
    expect(a.replicates).toEqual(b.replicates);
    expect(a.ci).toEqual(b.ci);
    expect(c.replicates).not.toEqual(a.replicates);
    expect(a.estimate).toBeCloseTo(mean(x), 14);
    expect(a).toMatchObject({ B: 500, seed: 7, level: 0.95, invalidReplicates: 0 });
    expect(bootstrapCI(x, mean, { B: 50 }).seed).toBe(42);
  });

  it('counts undefined replicates and refuses when there are too many', () => {
    // The range/SD of a one-value resample is 0; a statistic dividing by it is undefined.
    const x = [1, 2];
    const cv = (v: Float64Array) => 1 / (Math.max(...v) - Math.min(...v));
    expect(() => bootstrapCI(x, cv, { B: 200 })).toThrow(StatisticsError);
    const lenient = bootstrapCI(x, cv, { B: 200, maxInvalidFraction: 0.9 });
    expect(lenient.invalidReplicates).toBeGreaterThan(0);
    expect(lenient.replicates.length + lenient.invalidReplicates).toBe(200);
  });

  it('rejects bad input with typed errors', () => {
    expect(() => bootstrapCI([], mean)).toThrow(StatisticsError);
    expect(() => bootstrapCI([1, Number.NaN], mean)).toThrow(/values\[1\]/);
    expect(() => bootstrapCI([1, 2], mean, { B: 1 })).toThrow(/B/);
    expect(() => bootstrapCI([1, 2], mean, { level: 1 })).toThrow(/level/);
    expect(() => bootstrapCI([1, 2], mean, { seed: 0.5 })).toThrow(/seed/);
    expect(() => bootstrapCI([1, 2], () => Number.NaN)).toThrow(StatisticsError);
  });
});

describe('clusterBootstrap', () => {
  interface Row {
    cluster: number;
    value: number;
  }
  const rowMean = (rows: readonly Row[]) => {
    let s = 0;
    for (const row of rows) s += row.value;
    return s / rows.length;
  };

  it('covers the true mean of clustered data 93–97% of the time (600 data sets of 40 clusters, B = 1,000)', () => {
    const r = rng(777);
    let covered = 0;
    const sims = 600;
    for (let s = 0; s < sims; s++) {
      const rows: Row[] = [];
      for (let c = 0; c < 40; c++) {
        const effect = 0.7 * normal(r);
        const size = 2 + r.int(5);
        for (let i = 0; i < size; i++) rows.push({ cluster: c, value: 1 + effect + normal(r) });
      }
      const { ci } = clusterBootstrap(rows, { cluster: (row) => row.cluster, statistic: rowMean, B: 1000, seed: s });
      if (ci[0] <= 1 && 1 <= ci[1]) covered++;
    }
    expect(covered / sims).toBeGreaterThanOrEqual(0.93);
    expect(covered / sims).toBeLessThanOrEqual(0.97);
  }, 120_000);

  it('draws whole clusters: a replicate is the concatenation of the drawn clusters', () => {
    // Two clusters with constant values: every replicate mean is a mix of whole clusters.
    const rows: Row[] = [
      { cluster: 0, value: 0 },
      { cluster: 0, value: 0 },
      { cluster: 1, value: 6 },
    ];
    const result = clusterBootstrap(rows, { cluster: (row) => row.cluster, statistic: rowMean, B: 400, seed: 1 });
    const possible = new Set([0, 6, 2]); // {0,0}, {1,1}, {0,1} → 0, 6, 6/3
    for (const value of result.replicates) expect(possible.has(value)).toBe(true);
    expect(result.nClusters).toBe(2);
  });

  it('a paired mitigation contrast (anchor − control per session) is reproducible by seed', () => {
    const r = rng(5);
    const rows = Array.from({ length: 20 }, (_, session) => ({
      session: `s${session}`,
      delta: 0.08 + 0.1 * normal(r),
    }));
    const options = {
      cluster: (row: (typeof rows)[number]) => row.session,
      statistic: (rs: readonly (typeof rows)[number][]) => rs.reduce((s, x) => s + x.delta, 0) / rs.length,
      B: 2000,
      seed: 42,
    };
    const a = clusterBootstrap(rows, options);
    const b = clusterBootstrap(rows, options);
    expect(a.replicates).toEqual(b.replicates);
    expect(clusterBootstrap(rows, { ...options, seed: 43 }).replicates).not.toEqual(a.replicates);
    expect(a.ci[0]).toBeLessThan(a.estimate);
    expect(a.ci[1]).toBeGreaterThan(a.estimate);
  });

  it('rejects one cluster, empty rows and bad keys', () => {
    const rows: Row[] = [
      { cluster: 1, value: 1 },
      { cluster: 1, value: 2 },
    ];
    expect(() => clusterBootstrap(rows, { cluster: (row) => row.cluster, statistic: rowMean })).toThrow(/one cluster/);
    expect(() => clusterBootstrap([] as Row[], { cluster: (row) => row.cluster, statistic: rowMean })).toThrow(StatisticsError);
    expect(() => clusterBootstrap(rows, { cluster: () => Number.NaN, statistic: rowMean })).toThrow(/rows\[0\]/);
  });
});

describe('clusterBootstrap cluster option', () => {
  it('accepts a field name as well as a function', () => {
    const rows = [
      { q: 'a', v: 1 },
      { q: 'a', v: 2 },
      { q: 'b', v: 5 },
      { q: 'c', v: 3 },
    ];
    const statistic = (rs: readonly { v: number }[]) => rs.reduce((s, r) => s + r.v, 0) / rs.length;
    const byName = clusterBootstrap(rows, { cluster: 'q', statistic, B: 300, seed: 3 });
    const byFunction = clusterBootstrap(rows, { cluster: (r) => r.q, statistic, B: 300, seed: 3 });
    expect(byName.replicates).toEqual(byFunction.replicates);
    expect(byName.nClusters).toBe(3);
  });
});
