import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { type ClusteredValue, dRel } from './d-rel.js';
import { type Rng, rng } from './rng.js';

function normal(r: Rng): number {
  let u = 0;
  while (u === 0) u = r.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r.next());
}
const mean = (v: readonly number[]) => v.reduce((s, x) => s + x, 0) / v.length;
const sd = (v: readonly number[]) => {
  const m = mean(v);
  return Math.sqrt(v.reduce((s, x) => s + (x - m) ** 2, 0) / (v.length - 1));
};

/** Questions with a shared random intercept; treat is shifted by `effect`. */
function simulate(r: Rng, questions: number, perArm: number, effect: number) {
  const treat: ClusteredValue[] = [];
  const noise: ClusteredValue[] = [];
  const floor: ClusteredValue[] = [];
  for (let q = 0; q < questions; q++) {
    const intercept = 0.5 * normal(r);
    for (let i = 0; i < perArm; i++) {
      treat.push({ value: 1 + effect + intercept + normal(r), cluster: `q${q}` });
      noise.push({ value: 1 + intercept + normal(r), cluster: `q${q}` });
      floor.push({ value: 1 + intercept + normal(r), cluster: `q${q}` });
    }
  }
  return { treat, noise, floor };
}

/** Row-level reference: the same cluster draws, every statistic recomputed from the rows. */
function referenceReplicates(input: { treat: ClusteredValue[]; noise: ClusteredValue[]; floor: ClusteredValue[] }, B: number, seed: number) {
  const keys: (string | number)[] = [];
  for (const row of [...input.treat, ...input.noise, ...input.floor]) if (!keys.includes(row.cluster)) keys.push(row.cluster);
  const r = rng(seed);
  const dRels: number[] = [];
  const elevations: number[] = [];
  for (let b = 0; b < B; b++) {
    const drawn = Array.from({ length: keys.length }, () => keys[r.int(keys.length)]);
    const take = (rows: ClusteredValue[]) => drawn.flatMap((key) => rows.filter((row) => row.cluster === key).map((row) => row.value));
    const t = take(input.treat);
    const n = take(input.noise);
    const f = take(input.floor);
    dRels.push((mean(t) - mean(n)) / sd(n));
    elevations.push(mean(t) / mean(f) - 1);
  }
  return { dRels, elevations };
}

describe('dRel', () => {
  it('point estimates follow the definitions (σ_noise with n − 1)', () => {
    const data = simulate(rng(1), 15, 3, 0.8);
    const result = dRel(data, { B: 200 });
    const t = data.treat.map((row) => row.value);
    const n = data.noise.map((row) => row.value);
    const f = data.floor.map((row) => row.value);
    expect(result.dRel).toBeCloseTo((mean(t) - mean(n)) / sd(n), 12);
    expect(result.sdNoise).toBeCloseTo(sd(n), 12);
    expect(result.elevation).toBeCloseTo(mean(t) / mean(f) - 1, 12);
    expect(result.elevationFloor).toBe('floor');
    expect(result).toMatchObject({ nClusters: 15, nTreat: 45, nNoise: 45, nFloor: 45, B: 200, seed: 42 });
    // Without a floor arm, the elevation is taken over the noise arm.
    const overNoise = dRel({ treat: data.treat, noise: data.noise }, { B: 200 });
    expect(overNoise.elevation).toBeCloseTo(mean(t) / mean(n) - 1, 12);
    expect(overNoise.elevationFloor).toBe('noise');
  });

  it('each replicate equals a row-level recomputation on the same drawn questions (μ_noise and σ_noise re-estimated)', () => {
    const r = rng(2);
    const data = simulate(r, 12, 3, 0.5);
    // Unbalanced questions: one without treat rows, one with extra noise rows.
    data.treat = data.treat.filter((row) => row.cluster !== 'q3');
    data.noise.push({ value: 2.5, cluster: 'q5' }, { value: -0.5, cluster: 'q5' });
    const B = 300;
    const fast = dRel(data, { B, seed: 9, maxInvalidFraction: 0.2 });
    const slow = referenceReplicates(data, B, 9);
    const finiteD = slow.dRels.filter(Number.isFinite);
    expect(fast.replicates.dRel.length).toBe(finiteD.length);
    fast.replicates.dRel.forEach((value, i) => {
      expect(Math.abs(value - (finiteD[i] as number))).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(value)));
    });
    const finiteE = slow.elevations.filter(Number.isFinite);
    fast.replicates.elevation.forEach((value, i) => {
      expect(Math.abs(value - (finiteE[i] as number))).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(value)));
    });
  });

  it('without a floor arm, replicates match the reference with the noise rows as the floor', () => {
    const data = simulate(rng(12), 10, 2, 0.4);
    const fast = dRel({ treat: data.treat, noise: data.noise }, { B: 200, seed: 4 });
    const slow = referenceReplicates({ treat: data.treat, noise: data.noise, floor: data.noise }, 200, 4);
    fast.replicates.dRel.forEach((value, i) => {
      expect(Math.abs(value - (slow.dRels[i] as number))).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(value)));
    });
    fast.replicates.elevation.forEach((value, i) => {
      expect(Math.abs(value - (slow.elevations[i] as number))).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(value)));
    });
  });

  it('covers the true d_rel and elevation 93–97% of the time (1,000 data sets of 100 questions, B = 1,000)', () => {
    // Marginal σ_noise = √(0.5² + 1) and μ_treat − μ_noise = 0.5, so d_rel = 0.5/√1.25; elevation = 1.5/1 − 1.
    const trueD = 0.5 / Math.sqrt(1.25);
    const r = rng(31337);
    let coveredD = 0;
    let coveredE = 0;
    const sims = 1000;
    for (let s = 0; s < sims; s++) {
      const result = dRel(simulate(r, 100, 3, 0.5), { B: 1000, seed: s });
      if (result.ci[0] <= trueD && trueD <= result.ci[1]) coveredD++;
      if (result.elevationCi[0] <= 0.5 && 0.5 <= result.elevationCi[1]) coveredE++;
    }
    for (const covered of [coveredD, coveredE]) {
      expect(covered / sims).toBeGreaterThanOrEqual(0.93);
      expect(covered / sims).toBeLessThanOrEqual(0.97);
    }
  }, 180_000);

  it('p is small for a real effect and large for none', () => {
    expect(dRel(simulate(rng(3), 40, 3, 1), { B: 2000 }).p).toBeLessThan(0.01);
    expect(dRel(simulate(rng(4), 40, 3, 0), { B: 2000 }).p).toBeGreaterThan(0.05);
  });

  it('is exactly reproducible for a seed; another seed differs', () => {
    const data = simulate(rng(5), 20, 2, 0.3);
    const a = dRel(data, { B: 500, seed: 1 });
    const b = dRel(data, { B: 500, seed: 1 });
    expect(a.replicates.dRel).toEqual(b.replicates.dRel);
    expect(a.replicates.elevation).toEqual(b.replicates.elevation);
    expect(dRel(data, { B: 500, seed: 2 }).replicates.dRel).not.toEqual(a.replicates.dRel);
  });

  it('refuses zero-variance noise, empty arms, one question, NaN and bad rows', () => {
    const treat = [
      { value: 1, cluster: 'a' },
      { value: 2, cluster: 'b' },
    ];
    const flat = [
      { value: 0.5, cluster: 'a' },
      { value: 0.5, cluster: 'b' },
    ];
    expect(() => dRel({ treat, noise: flat })).toThrow(/zero variance/);
    expect(() => dRel({ treat: [], noise: flat })).toThrow(StatisticsError);
    expect(() => dRel({ treat, noise: [{ value: 1, cluster: 'a' }] })).toThrow(/noise has 1 row/);
    const oneQuestion = [
      { value: 1, cluster: 'a' },
      { value: 2, cluster: 'a' },
    ];
    expect(() => dRel({ treat: oneQuestion, noise: oneQuestion })).toThrow(/one question/);
    expect(() => dRel({ treat: [{ value: Number.NaN, cluster: 'a' }], noise: flat })).toThrow(/treat\[0\]\.value/);
    expect(() => dRel({ treat: [{ value: 1, cluster: undefined as unknown as string }], noise: flat })).toThrow(InvalidArgumentError);
    const zeroFloor = [
      { value: 0, cluster: 'a' },
      { value: 0, cluster: 'b' },
    ];
    expect(() => dRel({ treat, noise: [...flat, { value: 1, cluster: 'a' }], floor: zeroFloor })).toThrow(/elevation/);
  });
});
