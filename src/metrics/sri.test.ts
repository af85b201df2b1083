import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { editDistance, normalizedEditDistance } from './edit-distance.js';
import { jensenShannon } from './jensen-shannon.js';
import { sri, sriDrift, sriRobustness } from './sri.js';
import { argumentOf } from './testing/fixtures.js';

const symbol = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('Recall/Fact', 'Compute/Arithmetic', 'Infer/Deduction', 'Verify/Check', 'unmapped') },
  { weight: 1, arbitrary: fc.string({ maxLength: 3 }) },
);
// lengths past 32 exercise the two-row fallback of the bit-parallel edit distance
const sequence = fc.oneof(fc.array(symbol, { maxLength: 14 }), fc.array(symbol, { minLength: 28, maxLength: 45 }));

/** Textbook full-matrix Levenshtein, the oracle for the bit-parallel implementation. */
function levenshtein(a: readonly string[], b: readonly string[]): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      rows[i]![j] = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return rows[a.length]![b.length]!;
}

const LN_4_3 = Math.log(4 / 3);

describe('editDistance', () => {
  it('hand-computed cases', () => {
    // kitten → sitting over one-letter symbols: k→s, e→i, +g = 3
    expect(editDistance([...'kitten'], [...'sitting'])).toBe(3);
    // symbols are atomic: one substitution, not a character-level distance
    expect(editDistance(['Recall/Fact', 'Plan/Order'], ['Recall/Facts', 'Plan/Order'])).toBe(1);
    expect(editDistance(['a', 'b', 'c'], ['c', 'a', 'b'])).toBe(2); // delete c at end, insert c at front
    expect(editDistance([], [])).toBe(0);
    expect(editDistance(['a', 'b'], [])).toBe(2);
    expect(editDistance([], ['a', 'b', 'c'])).toBe(3);
    expect(normalizedEditDistance(['a', 'b', 'c'], ['a', 'c'])).toBe(1 / 3);
    expect(normalizedEditDistance([], [])).toBe(0);
    expect(normalizedEditDistance([], ['x'])).toBe(1);
  });

  it('handles the 32-symbol word boundary of the bit-parallel path', () => {
    for (const length of [31, 32, 33, 64, 65]) {
      const a = Array.from({ length }, (_, k) => `s${k % 5}`);
      const b = Array.from({ length: length + 1 }, (_, k) => `s${(k * 2) % 5}`);
      expect(editDistance(a, b)).toBe(levenshtein(a, b));
      expect(editDistance(b, a)).toBe(levenshtein(a, b));
    }
  });

  it('matches the textbook DP; symmetric; d(S,S)=0; triangle inequality', () => {
    fc.assert(
      fc.property(sequence, sequence, sequence, (a, b, c) => {
        const ab = editDistance(a, b);
        expect(ab).toBe(levenshtein(a, b));
        expect(editDistance(b, a)).toBe(ab);
        expect(editDistance(a, a)).toBe(0);
        expect(ab).toBeLessThanOrEqual(editDistance(a, c) + editDistance(c, b));
        const normalized = normalizedEditDistance(a, b);
        expect(normalized).toBeGreaterThanOrEqual(0);
        expect(normalized).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('re-interns an array mutated between calls (the interning memo is verified)', () => {
    const a = ['x', 'y', 'z'];
    const b = ['x', 'y', 'z'];
    expect(editDistance(a, b)).toBe(0);
    a[1] = 'q';
    expect(editDistance(a, b)).toBe(1);
    a.push('w');
    expect(editDistance(a, b)).toBe(2);
    a.length = 1;
    expect(editDistance(a, b)).toBe(2);
    (a as unknown[])[0] = 5;
    expect(argumentOf(() => editDistance(a, b))).toBe('a');
    a[0] = 'y';
    expect(editDistance(a, b)).toBe(2);
    expect(sriDrift(b, b)).toBe(0);
    b[2] = 'y';
    expect(jensenShannon(['x', 'y', 'z'], b)).toBeGreaterThan(0);
  });

  it('keeps symbols apart that share an interning cache slot (same length, middle and last character)', () => {
    const a = ['aXc', 'bXc', 'aXc', 'cXc'];
    const b = ['bXc', 'aXc', 'cXc', 'bXc'];
    expect(editDistance(a, b)).toBe(levenshtein(a, b));
    expect(jensenShannon(['aXc', 'aXc'], ['bXc', 'bXc'])).toBe(1);
    expect(sriDrift(['aXc'], ['bXc'])).toBe(1);
  });

  it('rejects non-arrays and non-string symbols', () => {
    expect(argumentOf(() => editDistance(null as unknown as string[], []))).toBe('a');
    expect(argumentOf(() => editDistance(['x'], [1] as unknown as string[]))).toBe('b');
  });
});

describe('jensenShannon (eq. 4)', () => {
  it('hand-computed cases', () => {
    // h_a = {x: ½, y: ½}, h_b = {x: 1}, h̄ = {x: ¾, y: ¼}
    // KL(h_a‖h̄) = ½ln(½/¾) + ½ln(½/¼) = ½ln(4/3); KL(h_b‖h̄) = ln(4/3)
    // JSD = ½(½ln(4/3) + ln(4/3)) = ¾ln(4/3); distance = √(¾ln(4/3) / ln 2) ≈ 0.5579
    expect(jensenShannon(['x', 'y'], ['x', 'x'])).toBeCloseTo(Math.sqrt((0.75 * LN_4_3) / Math.LN2), 15);
    // disjoint supports: JSD = ln 2 → distance 1
    expect(jensenShannon(['x'], ['y'])).toBe(1);
    expect(jensenShannon(['a', 'b'], ['c', 'd', 'c'])).toBe(1);
    // order is ignored; equal histograms of different lengths are at distance exactly 0
    expect(jensenShannon(['a', 'b', 'c'], ['c', 'b', 'a'])).toBe(0);
    expect(jensenShannon(['a', 'b'], ['a', 'b', 'b', 'a'])).toBe(0);
    expect(jensenShannon(['a', 'b', 'b'], ['b', 'a', 'b', 'b', 'a', 'b'])).toBe(0);
  });

  it('both empty → 0; exactly one empty → 1', () => {
    expect(jensenShannon([], [])).toBe(0);
    expect(jensenShannon(['a'], [])).toBe(1);
    expect(jensenShannon([], ['a', 'b'])).toBe(1);
  });

  it('∈ [0, 1], symmetric, d(S,S) = 0, triangle inequality (JS distance is a metric)', () => {
    fc.assert(
      fc.property(sequence, sequence, sequence, (a, b, c) => {
        const ab = jensenShannon(a, b);
        expect(ab).toBeGreaterThanOrEqual(0);
        expect(ab).toBeLessThanOrEqual(1);
        expect(Number.isNaN(ab)).toBe(false);
        expect(jensenShannon(b, a)).toBeCloseTo(ab, 14);
        expect(jensenShannon(a, a)).toBe(0);
        expect(ab).toBeLessThanOrEqual(jensenShannon(a, c) + jensenShannon(c, b) + 1e-12);
      }),
    );
  });

  it('rejects bad sequences', () => {
    expect(argumentOf(() => jensenShannon(['a'], 'ab' as unknown as string[]))).toBe('b');
  });
});

describe('sriDrift (eq. 16) and sri (eq. 17)', () => {
  it('hand-computed cases', () => {
    // a=[x,y], b=[x,x]: ED = 1 → d_seq = 1/2; d_dist = √(¾ln(4/3)/ln2)
    const dDist = Math.sqrt((0.75 * LN_4_3) / Math.LN2);
    expect(sriDrift(['x', 'y'], ['x', 'x'])).toBeCloseTo(0.5 * 0.5 + 0.5 * dDist, 15);
    expect(sriDrift(['x', 'y'], ['x', 'x'], 1)).toBe(0.5);
    expect(sriDrift(['x', 'y'], ['x', 'x'], 0)).toBeCloseTo(dDist, 15);
    // a permutation: ED([a,b,c],[c,a,b]) = 2 → d_seq = 2/3, d_dist = 0 → α=0.25 gives 1/6
    expect(sriDrift(['a', 'b', 'c'], ['c', 'a', 'b'], 0.25)).toBeCloseTo(0.25 * (2 / 3), 15);
    // σ_SRI = mean over variants: d(base,base)=0, d(base,[x,x]) as above, d(base,[z]) = ½·1 + ½·1 = 1
    const base = ['x', 'y'];
    const expected = (0 + (0.25 + 0.5 * dDist) + 1) / 3;
    expect(sri(base, [['x', 'y'], ['x', 'x'], ['z']])).toBeCloseTo(expected, 15);
    expect(sriRobustness(base, [['x', 'y'], ['x', 'x'], ['z']])).toBeCloseTo(1 - expected, 15);
  });

  it('edge cases: both empty → 0, exactly one empty → 1', () => {
    expect(sriDrift([], [])).toBe(0);
    expect(sriDrift(['a'], [])).toBe(1);
    expect(sriDrift([], ['a'], 0.3)).toBe(1);
    expect(sri([], [[], ['a']])).toBe(0.5);
  });

  it('∈ [0, 1], symmetric, d(S,S) = 0 for every α', () => {
    fc.assert(
      fc.property(sequence, sequence, fc.double({ min: 0, max: 1, noNaN: true }), (a, b, alpha) => {
        const d = sriDrift(a, b, alpha);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(1);
        expect(sriDrift(b, a, alpha)).toBeCloseTo(d, 14);
        expect(sriDrift(a, a, alpha)).toBe(0);
      }),
    );
  });

  it('sri is the mean of sriDrift over variants; robustness = 1 − sri', () => {
    fc.assert(
      fc.property(sequence, fc.array(sequence, { minLength: 1, maxLength: 5 }), (base, variants) => {
        const mean = variants.reduce((sum, v) => sum + sriDrift(base, v), 0) / variants.length;
        expect(sri(base, variants)).toBeCloseTo(mean, 14);
        expect(sriRobustness(base, variants)).toBeCloseTo(1 - mean, 14);
      }),
    );
  });

  it('rejects bad alpha, bad sequences and an empty variant list', () => {
    expect(argumentOf(() => sriDrift(['a'], ['b'], 1.5))).toBe('alpha');
    expect(argumentOf(() => sriDrift(['a'], ['b'], -0.1))).toBe('alpha');
    expect(argumentOf(() => sriDrift(['a'], ['b'], Number.NaN))).toBe('alpha');
    expect(argumentOf(() => sriDrift(['a'], ['b'], '0.5' as unknown as number))).toBe('alpha');
    expect(argumentOf(() => sri(['a'], []))).toBe('variants');
    expect(argumentOf(() => sri(['a'], 'x' as unknown as string[][]))).toBe('variants');
    expect(argumentOf(() => sri(['a'], [['b'], [2] as unknown as string[]]))).toBe('variants[1]');
    expect(argumentOf(() => sri(5 as unknown as string[], [['b']]))).toBe('base');
  });
});
