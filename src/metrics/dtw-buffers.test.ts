import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dtw } from './dtw.js';
import { rng } from '../stats/rng.js';

/*
 * The discrete DTW reuses module-level buffers (matrix, path assembly, a grid of shared path
 * steps) and computes two rows per pass. These tests pin every branch of that machinery to a
 * plain reference DP written here: odd and even row counts, sizes that grow and shrink the
 * buffers between calls, calls with and without path interleaved, steps beyond the shared
 * grid (index ≥ 64) and paths long enough to bypass the reused assembly array.
 */

interface Reference {
  raw: number;
  normalized: number;
  path: Array<[number, number]>;
}

/** Textbook O(n·m) DTW with the documented tie-break: diagonal, then (i−1, j), then (i, j−1). */
function referenceDtw(a: readonly string[], b: readonly string[]): Reference {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) {
    const longest = Math.max(n, m);
    return { raw: longest, normalized: longest === 0 ? 0 : 1, path: [] };
  }
  const D: number[][] = [];
  for (let i = 0; i < n; i++) {
    const row: number[] = [];
    for (let j = 0; j < m; j++) {
      const cost = a[i] === b[j] ? 0 : 1;
      let best: number;
      if (i === 0 && j === 0) best = 0;
      else if (i === 0) best = row[j - 1]!;
      else if (j === 0) best = D[i - 1]![0]!;
      else best = Math.min(D[i - 1]![j - 1]!, D[i - 1]![j]!, row[j - 1]!);
      row.push(best + cost);
    }
    D.push(row);
  }
  const path: Array<[number, number]> = [];
  let i = n - 1;
  let j = m - 1;
  path.push([i, j]);
  while (i > 0 || j > 0) {
    if (i === 0) j--;
    else if (j === 0) i--;
    else {
      const diagonal = D[i - 1]![j - 1]!;
      const up = D[i - 1]![j]!;
      const left = D[i]![j - 1]!;
      if (diagonal <= up && diagonal <= left) {
        i--;
        j--;
      } else if (up <= left) i--;
      else j--;
    }
    path.push([i, j]);
  }
  path.reverse();
  const raw = D[n - 1]![m - 1]!;
  return { raw, normalized: raw / Math.max(n, m), path };
}

/** Seeded sequences over `alphabet` symbols (the stats module's xoshiro128**), for the large deterministic cases. */
function seededSequence(length: number, alphabet: number, seed: number): string[] {
  const random = rng(seed);
  return Array.from({ length }, () => `s${random.int(alphabet)}`);
}

function expectMatchesReference(a: readonly string[], b: readonly string[]): void {
  const expected = referenceDtw(a, b);
  const withPath = dtw(a, b);
  expect(withPath.raw).toBe(expected.raw);
  expect(withPath.normalized).toBe(expected.normalized);
  expect(withPath.path).toEqual(expected.path);
  expect(dtw(a, b, { path: false })).toEqual({ raw: expected.raw, normalized: expected.normalized });
}

// Few symbols → many equal costs → many ties for the tie-break to resolve.
const tieHeavy = fc.array(fc.constantFrom('A', 'B', 'C'), { maxLength: 20 });
const mixed = fc.array(fc.oneof(fc.constantFrom('Recall/Fact', 'Infer/Deduction', 'unmapped'), fc.string({ maxLength: 3 })), { maxLength: 24 });

describe('dtw buffers: agreement with a reference DP', () => {
  it('every shape up to 7 × 7 (odd and even row counts, one row, one column)', () => {
    for (let n = 1; n <= 7; n++) {
      for (let m = 1; m <= 7; m++) {
        for (let seed = 0; seed < 6; seed++) {
          expectMatchesReference(seededSequence(n, 2 + (seed % 3), 100 * n + 10 * m + seed), seededSequence(m, 2 + (seed % 3), 7 + 31 * seed + m));
        }
      }
    }
  });

  it('random pairs with many ties (fast-check): raw, normalized and the exact path', () => {
    fc.assert(
      fc.property(tieHeavy, tieHeavy, (a, b) => expectMatchesReference(a, b)),
      { numRuns: 400 },
    );
  });

  it('random pairs over a mixed alphabet (fast-check)', () => {
    fc.assert(
      fc.property(mixed, mixed, (a, b) => expectMatchesReference(a, b)),
      { numRuns: 300 },
    );
  });

  it('interleaved calls of varying sizes, with and without path, reuse buffers correctly', () => {
    const call = fc.record({ a: tieHeavy, b: tieHeavy, withPath: fc.boolean() });
    fc.assert(
      fc.property(fc.array(call, { minLength: 2, maxLength: 12 }), (calls) => {
        for (const { a, b, withPath } of calls) {
          const expected = referenceDtw(a, b);
          if (withPath) {
            expect(dtw(a, b)).toEqual(expected);
          } else {
            expect(dtw(a, b, { path: false })).toEqual({ raw: expected.raw, normalized: expected.normalized });
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('dtw buffers: growth and large inputs', () => {
  it('grows the matrix and the step grid, then serves small calls again', () => {
    const shapes: Array<[number, number]> = [
      [3, 4],
      [63, 64],
      [64, 65],
      [65, 3],
      [97, 33],
      [1, 500],
      [500, 1],
      [129, 130],
      [2, 2],
    ];
    shapes.forEach(([n, m], k) => {
      expectMatchesReference(seededSequence(n, 4, 11 + k), seededSequence(m, 4, 97 + k));
    });
  });

  it('paths longer than the reused assembly array (n + m − 1 > 4096) are exact, and later calls are unaffected', () => {
    const a = seededSequence(4000, 5, 1);
    const b = seededSequence(200, 5, 2);
    expectMatchesReference(a, b);
    expectMatchesReference(['A', 'B', 'A'], ['B', 'A']);
    expectMatchesReference(seededSequence(40, 3, 3), seededSequence(45, 3, 4));
  });

  it('a long path:false call between path calls does not disturb them', () => {
    const small = ['A', 'B', 'C', 'A'];
    const before = dtw(small, ['C', 'A']);
    const long = seededSequence(1500, 6, 5);
    expect(dtw(long, seededSequence(900, 6, 6), { path: false }).raw).toBe(referenceDtw(long, seededSequence(900, 6, 6)).raw);
    expect(dtw(small, ['C', 'A'])).toEqual(before);
  });
});

describe('dtw path steps: shared, frozen, fresh path array', () => {
  it('steps are frozen [i, j] pairs; below index 64 the same pair object is reused across results', () => {
    const first = dtw(['A', 'B', 'C'], ['A', 'C']).path;
    const second = dtw(['x', 'y'], ['x', 'z', 'y']).path;
    for (const step of [...first, ...second]) expect(Object.isFrozen(step)).toBe(true);
    expect(first[0]).toBe(second[0]); // both (0, 0)
    expect(first).not.toBe(second);
    expect(Object.isFrozen(first)).toBe(false);
  });

  it('steps beyond the shared grid are frozen too and carry the right indices', () => {
    const a = seededSequence(70, 3, 8);
    const b = seededSequence(66, 3, 9);
    const { path } = dtw(a, b);
    expect(path).toEqual(referenceDtw(a, b).path);
    const last = path[path.length - 1]!;
    expect(last).toEqual([69, 65]);
    expect(Object.isFrozen(last)).toBe(true);
  });

  it('mutating a returned path array does not leak into later results', () => {
    const a = ['A', 'B', 'A', 'B'];
    const b = ['B', 'A', 'B', 'A'];
    const expected = referenceDtw(a, b).path;
    const first = dtw(a, b).path as Array<readonly [number, number]>;
    first.reverse();
    first.push([99, 99]);
    first[0] = [7, 7];
    expect(dtw(a, b).path).toEqual(expected);
  });

  it('a frozen step cannot be modified', () => {
    const step = dtw(['A'], ['A']).path[0] as unknown as number[];
    expect(() => {
      step[0] = 5;
    }).toThrow(TypeError);
    expect(dtw(['A'], ['A']).path).toEqual([[0, 0]]);
  });
});
