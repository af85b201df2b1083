import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dtw } from './dtw.js';
import { argumentOf } from './testing/fixtures.js';

const symbol = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('Recall/Fact', 'Compute/Arithmetic', 'Infer/Deduction', 'Verify/Check', 'unmapped') },
  { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
);
const sequence = fc.array(symbol, { maxLength: 18 });
const nonEmpty = fc.array(symbol, { minLength: 1, maxLength: 18 });

function pathCost(a: readonly string[], b: readonly string[], path: ReadonlyArray<readonly [number, number]>): number {
  return path.reduce((sum, [i, j]) => sum + (a[i] === b[j] ? 0 : 1), 0);
}

describe('dtw: hand-computed cases (eq. 1–2, discrete cost)', () => {
  it('aligns [A,B,C] with [A,C]', () => {
    // cost 1[a_i≠b_j]: rows A,B,C × cols A,C = [0,1] [1,1] [1,0]
    // D row0 = [0, 1]; row1 = [1, 1+min(0,1,1)=1]; row2 = [2, 0+min(1,1,2)=1]
    // raw = 1, normalized = 1 / max(3,2) = 1/3.
    // Backtrack from (2,1): diagonal (1,0)=1 ties with up (1,1)=1 → diagonal; (1,0) → (0,0).
    const result = dtw(['A', 'B', 'C'], ['A', 'C']);
    expect(result.raw).toBe(1);
    expect(result.normalized).toBe(1 / 3);
    expect(result.path).toEqual([
      [0, 0],
      [1, 0],
      [2, 1],
    ]);
  });

  it('warps [A,B,A,B] onto [B,A,B,A] for half the Hamming cost', () => {
    // D = [1,1,2,2] / [1,2,1,2] / [2,1,2,1] / [2,2,1,2] → raw 2, normalized 2/4; Hamming = 4/4.
    // Backtrack: (3,3) up→(2,3) [up 1 = left 1 < diag 2, up preferred] → diag (1,2) → diag (0,1) → left (0,0).
    const result = dtw(['A', 'B', 'A', 'B'], ['B', 'A', 'B', 'A']);
    expect(result.raw).toBe(2);
    expect(result.normalized).toBe(0.5);
    expect(result.path).toEqual([
      [0, 0],
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 3],
    ]);
  });

  it('gives 0 for identical sequences and 1 for disjoint ones of equal length', () => {
    expect(dtw(['x', 'y', 'z'], ['x', 'y', 'z'])).toEqual({
      raw: 0,
      normalized: 0,
      path: [
        [0, 0],
        [1, 1],
        [2, 2],
      ],
    });
    // every cell costs 1; the diagonal path has max(n,m)=2 cells → raw 2 → normalized 1.
    expect(dtw(['x', 'y'], ['p', 'q']).normalized).toBe(1);
  });

  it('lets a repeated symbol absorb a stretch at no cost', () => {
    // [A,A,A,B] vs [A,B]: path (0,0),(1,0),(2,0),(3,1) costs 0 → raw 0 although lengths differ.
    expect(dtw(['A', 'A', 'A', 'B'], ['A', 'B']).raw).toBe(0);
  });

  it('treats symbols as atomic strings (no character-level matching)', () => {
    expect(dtw(['Recall/Fact'], ['Recall/Facts']).raw).toBe(1);
  });
});

describe('dtw: edge cases', () => {
  it('both empty → 0 with an empty path', () => {
    expect(dtw([], [])).toEqual({ raw: 0, normalized: 0, path: [] });
  });

  it('exactly one empty → normalized 1, raw max(n,m), empty path', () => {
    expect(dtw(['a', 'b', 'c'], [])).toEqual({ raw: 3, normalized: 1, path: [] });
    expect(dtw([], ['a'])).toEqual({ raw: 1, normalized: 1, path: [] });
    expect(dtw([], ['a'], { cost: { a: [1, 2] } })).toEqual({ raw: 1, normalized: 1, path: [] });
  });

  it('{ path: false } returns the same scores without a path', () => {
    const withPath = dtw(['A', 'B', 'A', 'B'], ['B', 'A', 'B', 'A']);
    const without = dtw(['A', 'B', 'A', 'B'], ['B', 'A', 'B', 'A'], { path: false });
    expect(without).toEqual({ raw: withPath.raw, normalized: withPath.normalized });
    expect('path' in without).toBe(false);
  });

  it('rejects bad input with an InvalidArgumentError naming the argument', () => {
    expect(argumentOf(() => dtw('abc' as unknown as string[], []))).toBe('a');
    expect(argumentOf(() => dtw(['a'], ['b', 3 as unknown as string]))).toBe('b');
    expect(argumentOf(() => dtw(['a'], [undefined as unknown as string]))).toBe('b');
    expect(argumentOf(() => dtw(['a'], ['b'], { path: 'no' as unknown as boolean }))).toBe('options.path');
    expect(argumentOf(() => dtw(['a'], ['b'], 5 as unknown as object))).toBe('options');
    expect(argumentOf(() => dtw(['a'], ['b'], { cost: 'cosine' as unknown as 'discrete' }))).toBe('options.cost');
    // vector mode: unknown symbol, mismatched dimension, non-finite component, bad cost function
    expect(argumentOf(() => dtw(['a'], ['zz'], { cost: { a: [1, 2] } }))).toBe('options.cost');
    expect(
      argumentOf(() =>
        dtw(['a'], ['b'], {
          cost: new Map([
            ['a', [1, 2]],
            ['b', [1, 2, 3]],
          ]),
        }),
      ),
    ).toBe('options.cost');
    expect(argumentOf(() => dtw(['a'], ['b'], { cost: { a: [1, Number.NaN], b: [0, 0] } }))).toBe('options.cost');
    expect(argumentOf(() => dtw(['a'], ['b'], { cost: () => Number.NaN }))).toBe('options.cost');
    expect(argumentOf(() => dtw(['a'], ['b'], { cost: () => -1 }))).toBe('options.cost');
    expect(argumentOf(() => dtw(['toString'], ['a'], { cost: { a: [1] } }))).toBe('options.cost');
  });
});

describe('dtw: geometry-aware cost ‖e(v) − e(u)‖₂', () => {
  const embeddings = { A: [0, 0], B: [3, 4], C: [6, 8] };

  it('uses Euclidean distances between embeddings', () => {
    // costs: A–B = 5, C–B = 5 → the only path (0,0),(1,0) costs 10; normalized 10 / max(2,1) = 5
    expect(dtw(['A', 'C'], ['B'], { cost: embeddings })).toEqual({
      raw: 10,
      normalized: 5,
      path: [
        [0, 0],
        [1, 0],
      ],
    });
    // [A,B] vs [A,C]: costs [[0,10],[5,5]] → D = [0,10] / [5, 5+min(0,10,5)=5] → raw 5, normalized 2.5
    const result = dtw(['A', 'B'], ['A', 'C'], { cost: new Map(Object.entries(embeddings)) });
    expect(result.raw).toBe(5);
    expect(result.normalized).toBe(2.5);
    expect(result.path).toEqual([
      [0, 0],
      [1, 1],
    ]);
  });

  it('accepts typed-array embeddings and a cost function', () => {
    const typed = { A: Float64Array.of(0, 0), B: Float32Array.of(3, 4) };
    expect(dtw(['A'], ['B'], { cost: typed }).raw).toBe(5);
    expect(dtw(['A', 'B'], ['B'], { cost: (x, y) => (x === y ? 0 : 0.25), path: false })).toEqual({ raw: 0.25, normalized: 0.125 });
  });

  it('equals the discrete DTW when distinct embeddings are at distance 1', () => {
    // one-hot vectors scaled by 1/√2 are pairwise at distance exactly 1
    const alphabet = ['p', 'q', 'r', 's'];
    const scale = Math.SQRT1_2;
    const oneHot = new Map(alphabet.map((s, k) => [s, alphabet.map((_, d) => (d === k ? scale : 0))]));
    const seq = fc.array(fc.constantFrom(...alphabet), { maxLength: 12 });
    fc.assert(
      fc.property(seq, seq, (a, b) => {
        const discrete = dtw(a, b);
        const vector = dtw(a, b, { cost: oneHot });
        expect(vector.raw).toBeCloseTo(discrete.raw, 12);
        expect(dtw(a, b, { cost: (x, y) => (x === y ? 0 : 1) })).toEqual(discrete);
      }),
    );
  });

  it('recovers from re-entrant calls inside a cost function', () => {
    const nested = (x: string, y: string) => dtw([x, x], [y], { path: false }).normalized;
    expect(dtw(['a', 'b'], ['a', 'c'], { cost: nested })).toEqual(dtw(['a', 'b'], ['a', 'c']));
  });
});

describe('dtw: properties', () => {
  it('normalized ∈ [0, 1], symmetric, d(S,S) = 0', () => {
    fc.assert(
      fc.property(sequence, sequence, (a, b) => {
        const ab = dtw(a, b);
        expect(ab.normalized).toBeGreaterThanOrEqual(0);
        expect(ab.normalized).toBeLessThanOrEqual(1);
        expect(Number.isInteger(ab.raw)).toBe(true);
        expect(dtw(b, a, { path: false })).toEqual({ raw: ab.raw, normalized: ab.normalized });
        expect(dtw(a, a).raw).toBe(0);
      }),
    );
  });

  it('never exceeds the normalized Hamming distance for equal lengths', () => {
    const equalLengthPair = fc
      .integer({ min: 1, max: 16 })
      .chain((n) => fc.tuple(fc.array(symbol, { minLength: n, maxLength: n }), fc.array(symbol, { minLength: n, maxLength: n })));
    fc.assert(
      fc.property(equalLengthPair, ([a, b]) => {
        const hamming = a.reduce((sum, s, i) => sum + (s === b[i] ? 0 : 1), 0) / a.length;
        expect(dtw(a, b).normalized).toBeLessThanOrEqual(hamming);
      }),
    );
  });

  it('path is monotone, continuous, covers (0,0)…(n−1,m−1) and its cost equals raw', () => {
    fc.assert(
      fc.property(nonEmpty, nonEmpty, (a, b) => {
        const { raw, path } = dtw(a, b);
        expect(path[0]).toEqual([0, 0]);
        expect(path[path.length - 1]).toEqual([a.length - 1, b.length - 1]);
        for (let k = 1; k < path.length; k++) {
          const di = path[k]![0] - path[k - 1]![0];
          const dj = path[k]![1] - path[k - 1]![1];
          expect([di, dj]).toSatisfy(([x, y]: number[]) => (x === 0 || x === 1) && (y === 0 || y === 1) && x + y > 0);
        }
        expect(path.length).toBeGreaterThanOrEqual(Math.max(a.length, b.length));
        expect(path.length).toBeLessThanOrEqual(a.length + b.length - 1);
        expect(pathCost(a, b, path)).toBe(raw);
      }),
    );
  });

  it('raw equals the sum of vector costs along the path', () => {
    const embeddings = { x: [0.1, 2], y: [1.5, -0.3], z: [0.7, 0.7] };
    const seq = fc.array(fc.constantFrom('x', 'y', 'z'), { minLength: 1, maxLength: 14 });
    const distance = (u: number[], v: number[]) => Math.hypot(u[0]! - v[0]!, u[1]! - v[1]!);
    fc.assert(
      fc.property(seq, seq, (a, b) => {
        const { raw, path } = dtw(a, b, { cost: embeddings });
        const along = path.reduce((sum, [i, j]) => sum + distance(embeddings[a[i] as 'x']!, embeddings[b[j] as 'x']!), 0);
        expect(raw).toBeCloseTo(along, 12);
      }),
    );
  });

  it('agrees with itself across buffer growth (long sequences after short ones)', () => {
    const long = Array.from({ length: 300 }, (_, k) => `s${k % 7}`);
    const other = Array.from({ length: 250 }, (_, k) => `s${(k * 3) % 5}`);
    const first = dtw(long, other);
    dtw(['a'], ['b']);
    expect(dtw(long, other)).toEqual(first);
    expect(dtw(long, other, { path: false }).raw).toBe(first.raw);
  });
});
