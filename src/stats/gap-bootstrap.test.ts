import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { gapBootstrap, type PositionScores } from './gap-bootstrap.js';
import { simulateGapScores } from './__fixtures__/gap-scores.js';
import { rng } from './rng.js';

const mean = (v: readonly number[]) => v.reduce((s, x) => s + x, 0) / v.length;

const simulate = simulateGapScores;

describe('gapBootstrap', () => {
  it('weights positions equally: gap = mean of per-position filler means − mean of per-position real means', () => {
    const positions = [
      { real: [0, 0, 0, 0], filler: [1, 1, 1, 1] },
      { real: [2], filler: [2, 3] },
    ];
    const result = gapBootstrap({ positions }, { B: 100 });
    expect(result.real.estimate).toBeCloseTo((0 + 2) / 2, 15);
    expect(result.filler.estimate).toBeCloseTo((1 + 2.5) / 2, 15);
    expect(result.gap).toBeCloseTo(0.75, 15);
    expect(result.nPositions).toBe(2);
  });

  it('replicates are the two-stage draws: positions, then each arm within a drawn position', () => {
    const positions = simulate(rng(3), 5, 4, 0.5, 0.3);
    positions[2] = { real: [1, 2], filler: [3, 0, 1, 2, 2, 3] }; // unequal arm sizes
    const B = 200;
    const result = gapBootstrap({ positions }, { B, seed: 17 });
    const r = rng(17);
    const draw = (scores: readonly number[]) => mean(Array.from(scores, () => scores[r.int(scores.length)] as number));
    for (let b = 0; b < B; b++) {
      let real = 0;
      let filler = 0;
      for (let c = 0; c < positions.length; c++) {
        const p = positions[r.int(positions.length)] as PositionScores;
        real += draw(p.real);
        filler += draw(p.filler);
      }
      expect(result.replicates.real[b]).toBeCloseTo(real / positions.length, 12);
      expect(result.replicates.filler[b]).toBeCloseTo(filler / positions.length, 12);
      expect(result.replicates.gap[b]).toBeCloseTo((filler - real) / positions.length, 12);
    }
  });

  it('is exactly reproducible for a seed; another seed differs; p reflects the effect', () => {
    const positions = simulate(rng(8), 12, 25, 0.6, 0.2);
    const a = gapBootstrap({ positions }, { B: 1000, seed: 42 });
    const b = gapBootstrap({ positions }, { B: 1000, seed: 42 });
    expect(a.replicates.gap).toEqual(b.replicates.gap);
    expect(a.ci).toEqual(b.ci);
    expect(gapBootstrap({ positions }, { B: 1000, seed: 43 }).replicates.gap).not.toEqual(a.replicates.gap);
    expect(a.p).toBeLessThan(0.01);
    const none = gapBootstrap({ positions: simulate(rng(9), 12, 25, 0, 0.2) }, { B: 1000 });
    expect(none.p).toBeGreaterThan(0.05);
  });

  it('a single position needs allowSinglePosition (then it is a cell-level bootstrap)', () => {
    const positions = [{ real: [1, 1, 2, 0, 1], filler: [2, 3, 2, 2, 1] }];
    expect(() => gapBootstrap({ positions })).toThrow(/only one position/);
    const single = gapBootstrap({ positions }, { allowSinglePosition: true, B: 500 });
    expect(single.gap).toBeCloseTo(1, 15);
    expect(single.ci[0]).toBeLessThan(1);
  });

  it('rejects empty arms, NaN scores and missing positions', () => {
    expect(() => gapBootstrap({ positions: [] })).toThrow(StatisticsError);
    expect(() =>
      gapBootstrap({
        positions: [
          { real: [1], filler: [] },
          { real: [1], filler: [2] },
        ],
      }),
    ).toThrow(/positions\[0\]\.filler is empty/);
    expect(() =>
      gapBootstrap({
        positions: [
          { real: [1, Number.NaN], filler: [1] },
          { real: [1], filler: [2] },
        ],
      }),
    ).toThrow(/positions\[0\]\.real\[1\]/);
    expect(() => gapBootstrap({} as never)).toThrow(InvalidArgumentError);
  });
});
