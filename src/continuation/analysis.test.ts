import { describe, expect, it } from 'vitest';
import { analyzeContinuation, type ContinuationObservation, contrastPairs, pairedEstimate } from './analysis.js';
import type { ContinuationArm } from './arms.js';

function obs(cutpoint: string, arm: ContinuationArm, fidelity: number | null, extra: Partial<ContinuationObservation> = {}): ContinuationObservation {
  return { target: 't', cutpoint, arm, generated: true, status: fidelity === null ? 'prose' : 'call', fidelity, sameTask: null, ...extra };
}

describe('continuation analysis', () => {
  it('every contrast of four arms, primary recent − cross first', () => {
    expect(contrastPairs()).toEqual([
      ['recent', 'cross'],
      ['recent', 'filler'],
      ['recent', 'scratch'],
      ['cross', 'filler'],
      ['cross', 'scratch'],
      ['filler', 'scratch'],
    ]);
  });

  it('sign-flip on non-zero differences: exact p for a small case, t interval', () => {
    // 5 positive non-zero differences and 2 zeros: exact two-sided p = 2/2^5.
    const e = pairedEstimate([0.5, 0.5, 0.5, 0.5, 0.5, 0, 0]);
    expect(e.nonZero).toBe(5);
    expect(e.method).toBe('exact');
    expect(e.p).toBeCloseTo(2 / 32, 12);
    expect(e.mean).toBeCloseTo(2.5 / 7, 12);
    expect(e.ci![0]).toBeLessThan(e.mean!);
    expect(pairedEstimate([])).toMatchObject({ n: 0, mean: null, reason: 'no pairs' });
    expect(pairedEstimate([0, 0, 0])).toMatchObject({ p: 1, mean: 0 });
    // Above 20 non-zero differences: Monte Carlo with the given resamples.
    const mc = pairedEstimate(
      Array.from({ length: 24 }, (_, i) => (i % 3 === 0 ? -0.2 : 0.3)),
      { resamples: 20_000 },
    );
    expect(mc.method).toBe('monte-carlo');
    expect(mc.resamples).toBe(20_000);
  });

  it('complete case drops cutpoints where either arm has no parseable call; ITT scores them 0; not-generated drops from both', () => {
    const observations = [
      obs('C1', 'recent', 1),
      obs('C1', 'cross', 0.5),
      obs('C2', 'recent', null),
      obs('C2', 'cross', 0.5),
      obs('C3', 'recent', 0.5),
      obs('C3', 'cross', null, { status: 'unparseable' }),
      obs('C4', 'recent', 1),
      obs('C4', 'cross', 0, { generated: false, status: 'missing', fidelity: null }),
    ];
    const analysis = analyzeContinuation(observations);
    const primary = analysis.targets[0]!.contrasts[0]!;
    expect(primary.primary).toBe(true);
    expect(primary.completeCase.n).toBe(1);
    expect(primary.completeCase.mean).toBeCloseTo(0.5, 12);
    expect(primary.itt.n).toBe(3);
    expect(primary.itt.mean).toBeCloseTo((0.5 - 0.5 + 0.5) / 3, 12);
    const attrition = Object.fromEntries(analysis.targets[0]!.attrition.map((a) => [a.arm, a]));
    expect(attrition.cross).toMatchObject({ attempted: 4, generated: 3, calls: 2, unparseable: 1, notGenerated: 1 });
    expect(attrition.recent).toMatchObject({ calls: 3, prose: 1, meanFidelity: 2.5 / 3 });
  });

  it('strata split the cutpoints by sameTask', () => {
    const observations = [
      obs('C1', 'recent', 1, { sameTask: true }),
      obs('C1', 'cross', 0, { sameTask: true }),
      obs('C2', 'recent', 0.5, { sameTask: false }),
      obs('C2', 'cross', 0.5, { sameTask: false }),
    ];
    const t = analyzeContinuation(observations).targets[0]!;
    expect(t.sameTaskCutpoints).toBe(1);
    expect(t.contrasts[0]!.strata.sameTask.completeCase).toMatchObject({ n: 1, mean: 1 });
    expect(t.contrasts[0]!.strata.crossTask.completeCase).toMatchObject({ n: 1, mean: 0 });
  });
});
