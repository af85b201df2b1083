import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dtw } from './dtw.js';
import { editDistance } from './edit-distance.js';
import { formatReward } from './format-reward.js';
import { jensenShannon } from './jensen-shannon.js';
import { lexicalDiversity } from './lexical-diversity.js';
import { sri, sriDrift } from './sri.js';
import { dpoLoss, grpoAdvantages } from './training.js';

/**
 * Golden values from tools/golden/metrics.py (independent Python/numpy/scipy
 * implementation). Regenerate with `python3 tools/golden/metrics.py`.
 */
interface Golden {
  seed: number;
  sequences: Array<{
    a: string[];
    b: string[];
    dtwRaw: number;
    dtwNormalized: number;
    dtwPath: Array<[number, number]>;
    editDistance: number;
    jensenShannon: number;
    alpha: number;
    sriDrift: number;
    sriDriftDefault: number;
  }>;
  dtwVector: Array<{ a: string[]; b: string[]; embeddings: Record<string, number[]>; raw: number; normalized: number; path: Array<[number, number]> }>;
  sri: Array<{ base: string[]; variants: string[][]; alpha: number; sri: number }>;
  lexicalDiversity: Array<{ text: string; value: number }>;
  formatReward: Array<{ text: string; value: number }>;
  grpoAdvantages: Array<{ rewards: number[]; eps: number; advantages: number[] }>;
  dpoLoss: Array<{
    policyChosen: number | number[];
    policyRejected: number | number[];
    refChosen: number | number[];
    refRejected: number | number[];
    beta: number;
    loss: number;
  }>;
}

const golden = JSON.parse(readFileSync(new URL('./__fixtures__/golden-metrics.json', import.meta.url), 'utf8')) as Golden;

/** |actual − expected| ≤ 1e-12, relative to |expected| once it exceeds 1. */
function expectClose(actual: number, expected: number, label: string): void {
  const tolerance = 1e-12 * Math.max(1, Math.abs(expected));
  if (!(Math.abs(actual - expected) <= tolerance)) {
    expect.fail(`${label}: got ${actual}, golden ${expected} (|Δ| = ${Math.abs(actual - expected)})`);
  }
}

describe(`golden values (tools/golden/metrics.py, seed ${golden.seed})`, () => {
  it(`has a few hundred sequence pairs`, () => {
    expect(golden.sequences.length).toBeGreaterThanOrEqual(300);
  });

  it('dtw (discrete): raw, normalized and the tie-broken path', () => {
    golden.sequences.forEach((c, k) => {
      const result = dtw(c.a, c.b);
      expect(result.raw, `case ${k}`).toBe(c.dtwRaw);
      expectClose(result.normalized, c.dtwNormalized, `sequences[${k}].dtwNormalized`);
      expect(result.path, `case ${k}`).toEqual(c.dtwPath);
      expect(dtw(c.a, c.b, { path: false }), `case ${k}`).toEqual({ raw: result.raw, normalized: result.normalized });
    });
  });

  it('editDistance, jensenShannon, sriDrift', () => {
    golden.sequences.forEach((c, k) => {
      expect(editDistance(c.a, c.b), `sequences[${k}].editDistance`).toBe(c.editDistance);
      expectClose(jensenShannon(c.a, c.b), c.jensenShannon, `sequences[${k}].jensenShannon`);
      expectClose(sriDrift(c.a, c.b, c.alpha), c.sriDrift, `sequences[${k}].sriDrift`);
      expectClose(sriDrift(c.a, c.b), c.sriDriftDefault, `sequences[${k}].sriDriftDefault`);
    });
  });

  it('dtw with Euclidean embedding cost', () => {
    golden.dtwVector.forEach((c, k) => {
      const result = dtw(c.a, c.b, { cost: c.embeddings });
      expectClose(result.raw, c.raw, `dtwVector[${k}].raw`);
      expectClose(result.normalized, c.normalized, `dtwVector[${k}].normalized`);
      expect(result.path, `dtwVector[${k}].path`).toEqual(c.path);
    });
  });

  it('sri over variants', () => {
    golden.sri.forEach((c, k) => {
      expectClose(sri(c.base, c.variants, c.alpha), c.sri, `sri[${k}]`);
    });
  });

  it('lexicalDiversity and formatReward', () => {
    golden.lexicalDiversity.forEach((c, k) => {
      expectClose(lexicalDiversity(c.text), c.value, `lexicalDiversity[${k}] ${JSON.stringify(c.text)}`);
    });
    golden.formatReward.forEach((c, k) => {
      expect(formatReward(c.text), `formatReward[${k}] ${JSON.stringify(c.text)}`).toBe(c.value);
    });
  });

  it('grpoAdvantages and dpoLoss', () => {
    golden.grpoAdvantages.forEach((c, k) => {
      const advantages = grpoAdvantages(c.rewards, c.eps);
      expect(advantages.length).toBe(c.advantages.length);
      advantages.forEach((value, i) => {
        expectClose(value, c.advantages[i]!, `grpoAdvantages[${k}][${i}]`);
      });
    });
    golden.dpoLoss.forEach((c, k) => {
      expectClose(dpoLoss(c.policyChosen, c.policyRejected, c.refChosen, c.refRejected, c.beta), c.loss, `dpoLoss[${k}]`);
    });
  });
});
