import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { expectClose, loadGolden } from './__fixtures__/golden.js';
import { wilcoxonSignedRank } from './wilcoxon.js';

interface WilcoxonCase {
  x: number[];
  y?: number[];
  statistic: number;
  p: number;
}
const golden = loadGolden<{ wilcoxon: WilcoxonCase[] }>('golden-tests.json');

describe('wilcoxonSignedRank', () => {
  it.each(golden.wilcoxon.map((c, i) => [i, c.x.length, c] as const))('matches scipy 1.17 wilcoxon defaults #%i (n = %i)', (_, __, c) => {
    const result = wilcoxonSignedRank(c.x, c.y);
    expectClose(result.statistic, c.statistic, 1e-12, 0, 'statistic');
    expectClose(result.p, c.p, 1e-6, 0, `p (${result.method})`);
  });

  it('covers every branch of the method rule in the golden set', () => {
    const methods = new Set(golden.wilcoxon.map((c) => wilcoxonSignedRank(c.x, c.y).method));
    expect([...methods].sort()).toEqual(['exact', 'normal', 'sign-flip']);
  });

  it('picks the method from n (zeros included), ties and zeros', () => {
    const distinct = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? 1 : -1) * (i + 1));
    expect(wilcoxonSignedRank(distinct).method).toBe('exact');
    expect(wilcoxonSignedRank([...distinct, 51]).method).toBe('normal');
    expect(wilcoxonSignedRank([1, 2, 2, 3, -4]).method).toBe('sign-flip');
    const tiedFourteen = [1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -12, 13];
    expect(wilcoxonSignedRank(tiedFourteen).method).toBe('normal');
    const withZero = wilcoxonSignedRank([0, 1, 2, -3, 4]);
    expect(withZero).toMatchObject({ method: 'sign-flip', n: 4, zeros: 1, statistic: 3 });
  });

  it('gives the exact smallest p for n = 5 all positive: 2/32', () => {
    expect(wilcoxonSignedRank([1, 2, 3, 4, 5])).toMatchObject({ statistic: 0, p: 2 / 32 });
  });

  it('equals the one-sample test on x − y', () => {
    const x = [1.5, 2.25, 3.5, 0.75, 5.5, 2.5];
    const y = [1, 2, 4, 0.5, 3, 2.75];
    const paired = wilcoxonSignedRank(x, y);
    const single = wilcoxonSignedRank(x.map((v, i) => v - y[i]!));
    expect(paired).toEqual(single);
  });

  it('rejects all-zero differences', () => {
    expect(() => wilcoxonSignedRank([2, 3], [2, 3])).toThrow(StatisticsError);
  });

  it('rejects mismatched lengths, empty input and NaN', () => {
    expect(() => wilcoxonSignedRank([1, 2, 3], [1, 2])).toThrow(InvalidArgumentError);
    expect(() => wilcoxonSignedRank([])).toThrow(/x: needs at least 1/);
    expect(() => wilcoxonSignedRank([1, Number.NaN])).toThrow(/x: item 1 is NaN/);
  });
});
