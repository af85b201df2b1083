import { describe, expect, it } from 'vitest';
import { rng } from '../stats/rng.js';
import { analyzeContinuation, type ContinuationObservation } from './analysis.js';
import { normalDraws } from '../stats/testing/normal.js';

/**
 * Issue #39, continuation with several cross donors (`crossSessions`): each donor transcript
 * shifts the fidelity of the cross windows drawn from it (a donor effect, SD 0.2), cutpoints
 * take the donors in turn, and the population of donors has the recent arm's mean (the null).
 * With the donor as a unit (`crossDonorOf`), recent − cross holds its level; with one donor, or
 * several treated as if they were one, it does not. Seeded; figures in docs/statistics.md.
 */

function simulate(options: { cutpoints: number; donors: number; declared: boolean; replicates: number; seed: number; truth?: number }) {
  const random = rng(options.seed);
  const normal = normalDraws(random);
  const truth = options.truth ?? 0;
  const ids = Array.from({ length: options.cutpoints }, (_, i) => `C${String(i + 1).padStart(3, '0')}`);
  const donorOf = new Map(ids.map((id, i) => [id, `donor-${i % options.donors}`]));
  let rejects = 0;
  let covered = 0;
  let disagreements = 0;
  for (let r = 0; r < options.replicates; r++) {
    const effects = Array.from({ length: options.donors }, () => 0.2 * normal());
    const observations: ContinuationObservation[] = ids.flatMap((cutpoint, i) => {
      const base = { target: 'sim:t', cutpoint, generated: true, status: 'call' as const, sameTask: i % 2 === 0 };
      return [
        { ...base, arm: 'recent' as const, fidelity: 0.5 + truth + 0.3 * normal() },
        { ...base, arm: 'cross' as const, fidelity: 0.5 + (effects[i % options.donors] as number) },
      ];
    });
    const analysis = analyzeContinuation(observations, {
      seed: r,
      ...(options.declared ? { crossDonorOf: (c: string) => donorOf.get(c) ?? c } : {}),
    });
    const e = analysis.targets[0]?.contrasts.find((c) => c.primary)?.completeCase;
    if (!e) throw new Error('no primary contrast');
    const p = e.p as number;
    if (p < 0.05) rejects++;
    const ci = e.ci ?? [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY];
    if (ci[0] <= truth && ci[1] >= truth) covered++;
    if ((ci[0] > 0 || ci[1] < 0) !== p < 0.05) disagreements++;
    if (options.declared && e.clusters !== options.donors) throw new Error(`expected ${options.donors} donor clusters, got ${e.clusters}`);
  }
  return { fpr: rejects / options.replicates, coverage: covered / options.replicates, disagreements };
}

describe('continuation with several cross donors (donor effect SD 0.2, cutpoint noise 0.3)', () => {
  it('8 donors as units, 48 cutpoints: 2,000 seeded nulls hold the level and cover', () => {
    const out = simulate({ cutpoints: 48, donors: 8, declared: true, replicates: 2000, seed: 3911 });
    console.log(`continuation 8 donors as units: FPR ${out.fpr.toFixed(4)}, coverage ${out.coverage.toFixed(4)}`);
    expect(out.disagreements).toBe(0);
    expect(out.fpr).toBeLessThanOrEqual(0.06);
    expect(out.coverage).toBeGreaterThanOrEqual(0.93);
  }, 600_000);

  it('the same 8 donors with cutpoints as units (400 seeded nulls) over-reject', () => {
    const out = simulate({ cutpoints: 48, donors: 8, declared: false, replicates: 400, seed: 3912 });
    console.log(`continuation 8 donors, cutpoints as units: FPR ${out.fpr.toFixed(4)}, coverage ${out.coverage.toFixed(4)}`);
    expect(out.disagreements).toBe(0);
    expect(out.fpr).toBeGreaterThan(0.1);
  }, 600_000);

  it('one donor (crossSession): its effect is in every difference (400 seeded nulls, a claim about that donor only)', () => {
    const out = simulate({ cutpoints: 48, donors: 1, declared: false, replicates: 400, seed: 3913 });
    console.log(`continuation 1 donor: FPR ${out.fpr.toFixed(4)}, coverage ${out.coverage.toFixed(4)}`);
    expect(out.disagreements).toBe(0);
    expect(out.fpr).toBeGreaterThan(0.1);
  }, 600_000);

  it('planted +0.2 with 8 donors as units: power (1,000 seeded replicates)', () => {
    const out = simulate({ cutpoints: 48, donors: 8, declared: true, replicates: 1000, seed: 3914, truth: 0.2 });
    console.log(`continuation 8 donors as units, planted +0.2: power ${out.fpr.toFixed(4)}, coverage ${out.coverage.toFixed(4)}`);
    expect(out.coverage).toBeGreaterThanOrEqual(0.93);
    expect(out.fpr).toBeGreaterThan(0.3);
  }, 600_000);
});
