import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argumentOf } from './testing/fixtures.js';
import { dpoLoss, grpoAdvantages, selectPreferencePair } from './training.js';

describe('grpoAdvantages (eq. 11–13)', () => {
  it('hand-computed cases', () => {
    // μ = 2, σ = √((1+0+1)/3) = √(2/3) (population), Â = ±1 / (√(2/3) + 1e-6)
    const scale = Math.sqrt(2 / 3) + 1e-6;
    const advantages = grpoAdvantages([1, 2, 3]);
    expect(advantages[0]).toBeCloseTo(-1 / scale, 15);
    expect(advantages[1]).toBe(0);
    expect(advantages[2]).toBeCloseTo(1 / scale, 15);
    // ε = 0: μ = 2, σ = 1 → [−1, 1]
    expect(grpoAdvantages([1, 3], 0)).toEqual([-1, 1]);
    // equal rewards → zeros (also for ε = 0, where eq. 11 is 0/0)
    expect(grpoAdvantages([0.7, 0.7, 0.7])).toEqual([0, 0, 0]);
    expect(grpoAdvantages([0.1, 0.1, 0.1], 0)).toEqual([0, 0, 0]);
    expect(grpoAdvantages([5])).toEqual([0]);
  });

  it('advantages sum to 0 and have population σ ≈ σ_R/(σ_R+ε)', () => {
    const rewards = fc.array(fc.double({ min: -3, max: 3, noNaN: true }), { minLength: 2, maxLength: 16 });
    fc.assert(
      fc.property(rewards, (values) => {
        const advantages = grpoAdvantages(values);
        expect(advantages.every(Number.isFinite)).toBe(true);
        expect(Math.abs(advantages.reduce((s, x) => s + x, 0))).toBeLessThan(1e-6);
      }),
    );
  });

  it('rejects bad input', () => {
    expect(argumentOf(() => grpoAdvantages([]))).toBe('rewards');
    expect(argumentOf(() => grpoAdvantages([1, Number.NaN]))).toBe('rewards');
    expect(argumentOf(() => grpoAdvantages([1, Number.POSITIVE_INFINITY]))).toBe('rewards');
    expect(argumentOf(() => grpoAdvantages('1,2' as unknown as number[]))).toBe('rewards');
    expect(argumentOf(() => grpoAdvantages([1, 2], -1e-6))).toBe('eps');
    expect(argumentOf(() => grpoAdvantages([1, 2], Number.NaN))).toBe('eps');
  });
});

describe('dpoLoss (eq. 6–7)', () => {
  it('hand-computed cases', () => {
    // Δ = (−1 − (−1.5)) − (−2 − (−1.5)) = 0.5 + 0.5 = 1; loss = −log σ(0.1·1) = log(1 + e^−0.1)
    expect(dpoLoss(-1, -2, -1.5, -1.5, 0.1)).toBeCloseTo(Math.log1p(Math.exp(-0.1)), 15);
    // Δ = 0 → log 2
    expect(dpoLoss(-3, -4, -3, -4, 0.5)).toBeCloseTo(Math.LN2, 15);
    // arrays → the mean loss over pairs: Δ = [1, 0] with β = 0.1
    expect(dpoLoss([-1, -3], [-2, -4], [-1.5, -3], [-1.5, -4], 0.1)).toBeCloseTo((Math.log1p(Math.exp(-0.1)) + Math.LN2) / 2, 15);
  });

  it('is numerically stable for extreme margins', () => {
    // β·Δ = −1000: loss = 1000 + log(1 + e^−1000) = 1000 (naïve σ would give log(0) = −∞)
    expect(dpoLoss(-2000, 0, 0, 0, 0.5)).toBe(1000);
    // β·Δ = +1000: loss = log(1 + e^−1000) → 0, never negative
    expect(dpoLoss(2000, 0, 0, 0, 0.5)).toBe(0);
    fc.assert(
      fc.property(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.double({ min: 1e-3, max: 10, noNaN: true }), (margin, beta) => {
        const loss = dpoLoss(margin, 0, 0, 0, beta);
        expect(Number.isFinite(loss)).toBe(true);
        expect(loss).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it('rejects bad input', () => {
    expect(argumentOf(() => dpoLoss(-1, -2, -1, -1, 0))).toBe('beta');
    expect(argumentOf(() => dpoLoss(-1, -2, -1, -1, Number.NaN))).toBe('beta');
    expect(argumentOf(() => dpoLoss(-1, [-2], -1, -1, 0.1))).toBe('policyRejected');
    expect(argumentOf(() => dpoLoss([-1, -2], [-2, -3], [-1], [-1, -2], 0.1))).toBe('refChosen');
    expect(argumentOf(() => dpoLoss([-1], [-2], [-1], [Number.NaN], 0.1))).toBe('refRejected[0]');
    expect(argumentOf(() => dpoLoss([], [], [], [], 0.1))).toBe('policyChosen');
    expect(argumentOf(() => dpoLoss('x' as unknown as number, -2, -1, -1, 0.1))).toBe('policyChosen');
  });
});

describe('selectPreferencePair (§5.1)', () => {
  const candidates = [
    { id: 'perfect', helpfulness: 5, distracted: 0, acknowledged: 1 },
    { id: 'distracted-5', helpfulness: 5, distracted: 1, acknowledged: 1 }, // h = 5 but d = 1: neither
    { id: 'weak-distracted', helpfulness: 3, distracted: true, acknowledged: true },
    { id: 'weak-unacknowledged', helpfulness: 4, distracted: false, acknowledged: false },
    { id: 'weak-but-clean', helpfulness: 4, distracted: 0, acknowledged: 1 }, // h < 5, d = 0, a = 1: neither
    { id: 'perfect-2', helpfulness: 5, distracted: false, acknowledged: true },
    { id: 'unacknowledged-5', helpfulness: 5, distracted: 0, acknowledged: 0 }, // neither
  ] as const;

  it('returns every chosen and every rejected candidate, in order, keeping extra fields', () => {
    const { chosen, rejected } = selectPreferencePair(candidates);
    expect(chosen.map((c) => c.id)).toEqual(['perfect', 'perfect-2']);
    expect(rejected.map((c) => c.id)).toEqual(['weak-distracted', 'weak-unacknowledged']);
    expect(chosen[0]).toBe(candidates[0]);
    expect(selectPreferencePair([])).toEqual({ chosen: [], rejected: [] });
  });

  it('never puts a candidate in both lists', () => {
    const candidate = fc.record({
      helpfulness: fc.integer({ min: 1, max: 5 }),
      distracted: fc.boolean(),
      acknowledged: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(candidate, { maxLength: 10 }), (list) => {
        const { chosen, rejected } = selectPreferencePair(list);
        expect(chosen.some((c) => rejected.includes(c))).toBe(false);
        for (const c of chosen) expect(c.helpfulness === 5 && !c.distracted && c.acknowledged).toBe(true);
        for (const c of rejected) expect(c.helpfulness < 5 && (c.distracted || !c.acknowledged)).toBe(true);
      }),
    );
  });

  it('rejects malformed judgements', () => {
    expect(argumentOf(() => selectPreferencePair([{ helpfulness: 6, distracted: 0, acknowledged: 1 }]))).toBe('candidates[0].helpfulness');
    expect(argumentOf(() => selectPreferencePair([{ helpfulness: 4.5, distracted: 0, acknowledged: 1 }]))).toBe('candidates[0].helpfulness');
    expect(
      argumentOf(() =>
        selectPreferencePair([
          { helpfulness: 5, distracted: 0, acknowledged: 1 },
          { helpfulness: 2, distracted: 2 as 0, acknowledged: 1 },
        ]),
      ),
    ).toBe('candidates[1].distracted');
    expect(argumentOf(() => selectPreferencePair([null as unknown as { helpfulness: 5; distracted: 0; acknowledged: 1 }]))).toBe('candidates[0]');
    expect(argumentOf(() => selectPreferencePair({} as unknown as []))).toBe('candidates');
  });
});
