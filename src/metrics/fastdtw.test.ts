import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../core/errors.js';
import { rng } from '../stats/rng.js';
import { dtw } from './dtw.js';
import { cosineDistance, type FastDtwCost, type FastDtwFlavor, fastdtw, PreparedSymbolEmbeddings, referenceDtw } from './fastdtw.js';

const absCost: FastDtwCost = (a, b) => Math.abs(a[0]! - b[0]!);
const scalars = (values: readonly number[]) => values.map((v) => [v]);
const FLAVORS: readonly FastDtwFlavor[] = ['compiled', 'pure-python'];

/**
 * Golden values from tools/golden/fastdtw.py (both fastdtw 0.3.4 implementations re-derived in
 * Python, cosine checked against scipy). Regenerate with `python3 tools/golden/fastdtw.py`.
 */
interface Golden {
  vectorCases: Array<{
    cost: 'abs';
    x: number[][];
    y: number[][];
    radius: number;
    flavor: FastDtwFlavor;
    distance: number;
    path: Array<[number, number]>;
    exact: number;
  }>;
  embeddings: Record<string, number[]>;
  referenceCases: Array<{
    a: string[];
    b: string[];
    radius: number;
    flavor: FastDtwFlavor;
    distance: number | null;
    normalized: number | null;
    path: Array<[number, number]>;
  }>;
}
const golden = JSON.parse(readFileSync(new URL('./__fixtures__/golden-fastdtw.json', import.meta.url), 'utf8')) as Golden;

describe('fastdtw: golden values from the independent Python implementation', () => {
  it('matches every scalar |a − b| case (distance ≤ 1e-12, identical path)', () => {
    expect(golden.vectorCases.length).toBe(48);
    let worst = 0;
    for (const c of golden.vectorCases) {
      const result = fastdtw(c.x, c.y, absCost, { radius: c.radius, flavor: c.flavor });
      worst = Math.max(worst, Math.abs(result.distance - c.distance));
      expect(result.path).toEqual(c.path);
      // The exact DTW of the Python full matrix agrees with ours and bounds fastdtw from below.
      const exact = dtw(
        c.x.map((_, i) => String(i)),
        c.y.map((_, j) => `y${j}`),
        { cost: (s, t) => Math.abs(c.x[Number(s)]![0]! - c.y[Number(t.slice(1))]![0]!), path: false },
      ).raw;
      expect(Math.abs(exact - c.exact)).toBeLessThanOrEqual(1e-12);
      expect(result.distance).toBeGreaterThanOrEqual(exact - 1e-12);
    }
    expect(worst).toBeLessThanOrEqual(1e-12);
  });

  it('matches every dtw-reference case (cosine over float32 unit embeddings; distance and normalized ≤ 1e-12)', () => {
    expect(golden.referenceCases.length).toBe(80);
    const embed = (symbol: string) => golden.embeddings[symbol] as number[];
    const prepared = new PreparedSymbolEmbeddings(golden.embeddings);
    let worst = 0;
    for (const c of golden.referenceCases) {
      const result = referenceDtw(c.a, c.b, embed, { radius: c.radius, flavor: c.flavor });
      expect(referenceDtw(c.a, c.b, prepared, { radius: c.radius, flavor: c.flavor })).toEqual(result);
      if (c.distance === null) {
        expect(result.distance).toBeNaN();
        expect(result.normalized).toBeNaN();
        expect(result.undefinedReason).toBe('empty sequence');
        expect(result.path).toEqual([]);
        continue;
      }
      worst = Math.max(worst, Math.abs(result.distance - c.distance), Math.abs(result.normalized - (c.normalized as number)));
      expect(result.path).toEqual(c.path);
      expect(result.undefinedReason).toBeNull();
    }
    expect(worst).toBeLessThanOrEqual(1e-12);
  });

  it('exercises approximation and both flavours (the fixture is not trivial)', () => {
    const approximate = golden.vectorCases.filter((c) => c.distance > c.exact + 1e-12).length;
    expect(approximate).toBeGreaterThan(5);
    const cases = golden.referenceCases;
    let differing = 0;
    for (let k = 0; k + 1 < cases.length; k += 2) if (JSON.stringify(cases[k]!.path) !== JSON.stringify(cases[k + 1]!.path)) differing++;
    expect(differing).toBeGreaterThan(5);
  });
});

describe('fastdtw: published outputs of fastdtw 0.3.4', () => {
  it('reproduces the docstring example with both flavours', () => {
    for (const flavor of FLAVORS) {
      const result = fastdtw(scalars([1, 2, 3, 4, 5]), scalars([2, 3, 4]), absCost, { flavor });
      expect(result.distance).toBe(2);
      expect(result.path).toEqual([
        [0, 0],
        [1, 0],
        [2, 1],
        [3, 2],
        [4, 2],
      ]);
    }
  });

  it('reproduces issue #46: identical series, radius 5, paths differ between the compiled and pure-Python modules', () => {
    const series = scalars([1, 6, 6, 33, 35]);
    const compiled = fastdtw(series, series, absCost, { radius: 5, flavor: 'compiled' });
    const python = fastdtw(series, series, absCost, { radius: 5, flavor: 'pure-python' });
    expect(compiled.distance).toBe(0);
    expect(python.distance).toBe(0);
    expect(compiled.path).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
    expect(python.path).toEqual([
      [0, 0],
      [1, 1],
      [1, 2],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
  });

  it('reproduces issue #25: 0..999 against zeros, the compiled module walks the diagonal', () => {
    const x = scalars(Array.from({ length: 1000 }, (_, i) => i));
    const y = scalars(new Array<number>(1000).fill(0));
    const result = fastdtw(x, y, absCost);
    expect(result.distance).toBe(499_500);
    expect(result.path.length).toBe(1000);
    expect(result.path.every(([i, j]) => i === j)).toBe(true);
  });
});

const vocabulary = ['Recall/Fact', 'Compute/Arithmetic', 'Infer/Deduction', 'Verify/Check', 'unmapped'];
/** Seeded Gaussian-ish 3-d embeddings: random doubles never cancel exactly when fastdtw averages them. */
const embeddingArb = fc.integer().map((seed) => {
  const random = rng(seed);
  const next = () => random.next() - 0.5;
  return vocabulary.map(() => [next(), next(), next()]);
});
const symbolsArb = (max: number) => fc.array(fc.constantFrom(...vocabulary), { minLength: 1, maxLength: max });
const flavorArb = fc.constantFrom<FastDtwFlavor>('compiled', 'pure-python');

function table(vectors: number[][]): Record<string, number[]> {
  return Object.fromEntries(vocabulary.map((s, i) => [s, vectors[i]!]));
}

function exactCosine(a: string[], b: string[], embeddings: Record<string, number[]>): number {
  return dtw(a, b, { cost: (s, t) => cosineDistance(embeddings[s]!, embeddings[t]!), path: false }).raw;
}

function expectValidPath(path: ReadonlyArray<readonly [number, number]>, n: number, m: number): void {
  expect(path[0]).toEqual([0, 0]);
  expect(path[path.length - 1]).toEqual([n - 1, m - 1]);
  for (let k = 1; k < path.length; k++) {
    const di = path[k]![0] - path[k - 1]![0];
    const dj = path[k]![1] - path[k - 1]![1];
    expect([0, 1]).toContain(di);
    expect([0, 1]).toContain(dj);
    expect(di + dj).toBeGreaterThan(0);
  }
}

describe('fastdtw: properties', () => {
  it('equals exact DTW under the same cost when radius ≥ max(n, m)', () => {
    fc.assert(
      fc.property(symbolsArb(20), symbolsArb(20), embeddingArb, flavorArb, (a, b, vectors, flavor) => {
        const embeddings = table(vectors);
        const radius = Math.max(a.length, b.length);
        const result = referenceDtw(a, b, (s) => embeddings[s]!, { radius, flavor });
        expect(result.distance).toBe(exactCosine(a, b, embeddings));
      }),
    );
  });

  it('equals exact DTW when the widened coarse window covers the grid (2·radius ≥ max(n, m), recursion taken)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        embeddingArb,
        flavorArb,
        fc.integer(),
        (radius, extraA, extraB, vectors, flavor, seed) => {
          // Lengths in [radius + 2, 2·radius]: fastdtw recurses once, then searches the full grid.
          const n = Math.min(2 * radius, radius + 2 + extraA);
          const m = Math.min(2 * radius, radius + 2 + extraB);
          fc.pre(n >= radius + 2 && m >= radius + 2);
          const pick = (k: number) => vocabulary[Math.abs(seed * 31 + k * 7919) % vocabulary.length]!;
          const a = Array.from({ length: n }, (_, k) => pick(k));
          const b = Array.from({ length: m }, (_, k) => pick(k * 3 + 1));
          const embeddings = table(vectors);
          const result = referenceDtw(a, b, (s) => embeddings[s]!, { radius, flavor });
          expect(result.distance).toBe(exactCosine(a, b, embeddings));
        },
      ),
    );
  });

  it('returns a monotone contiguous corner-to-corner path whose cost is the distance, never below exact DTW', () => {
    const series = fc.array(fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 2, maxLength: 2 }), { minLength: 1, maxLength: 60 });
    const euclid: FastDtwCost = (p, q) => Math.hypot(p[0]! - q[0]!, p[1]! - q[1]!);
    fc.assert(
      fc.property(series, series, fc.integer({ min: 1, max: 4 }), flavorArb, (x, y, radius, flavor) => {
        const result = fastdtw(x, y, euclid, { radius, flavor });
        expectValidPath(result.path, x.length, y.length);
        const along = result.path.reduce((sum, [i, j]) => sum + euclid(Float64Array.from(x[i]!), Float64Array.from(y[j]!)), 0);
        expect(Math.abs(along - result.distance)).toBeLessThanOrEqual(1e-9 * Math.max(1, along));
        const exact = dtw(
          x.map((_, i) => `x${i}`),
          y.map((_, j) => `y${j}`),
          { cost: (s, t) => euclid(Float64Array.from(x[Number(s.slice(1))]!), Float64Array.from(y[Number(t.slice(1))]!)), path: false },
        ).raw;
        expect(result.distance).toBeGreaterThanOrEqual(exact - 1e-9 * Math.max(1, exact));
      }),
    );
  });

  it('dtw-reference: normalized lies in [0, max cosine cost], path length ≥ max(n, m); identical sequences score 0', () => {
    fc.assert(
      fc.property(symbolsArb(40), symbolsArb(40), embeddingArb, flavorArb, (a, b, vectors, flavor) => {
        const embeddings = table(vectors);
        const result = referenceDtw(a, b, (s) => embeddings[s]!, { flavor });
        let maxCost = 0;
        for (const s of a) for (const t of b) maxCost = Math.max(maxCost, cosineDistance(embeddings[s]!, embeddings[t]!));
        expect(result.normalized).toBeGreaterThanOrEqual(0);
        expect(result.normalized).toBeLessThanOrEqual(maxCost + 1e-12);
        expect(maxCost).toBeLessThanOrEqual(2);
        expect(result.path.length).toBeGreaterThanOrEqual(Math.max(a.length, b.length));
        expectValidPath(result.path, a.length, b.length);
        const self = referenceDtw(a, a, (s) => embeddings[s]!, { flavor });
        expect(self.distance).toBe(0);
        expect(self.normalized).toBe(0);
      }),
    );
  });
});

describe('cosineDistance', () => {
  it('is 0 for parallel, 1 for orthogonal, 2 for opposite vectors, and scale-invariant', () => {
    expect(cosineDistance([1, 2, 3], [2, 4, 6])).toBe(0);
    expect(cosineDistance([1, 0], [0, 5])).toBe(1);
    expect(cosineDistance([1, 1], [-3, -3])).toBe(2);
    // 1 − (1·2 + 2·1) / (√5 · √5) = 1 − 4/5
    expect(cosineDistance([1, 2], [2, 1])).toBeCloseTo(0.2, 15);
    expect(cosineDistance(new Float64Array([3, 4]), [30, 40])).toBe(0);
  });

  it('refuses zero vectors and mismatched dimensions', () => {
    expect(() => cosineDistance([0, 0], [1, 0])).toThrow(InvalidArgumentError);
    expect(() => cosineDistance([1, 0], [0, 0])).toThrow(/zero/);
    expect(() => cosineDistance([1, 0], [1, 0, 0])).toThrow(/dimension 3, expected 2/);
  });
});

describe('fastdtw / referenceDtw: arguments', () => {
  it('rejects bad radius, flavour, series and cost values with the argument named', () => {
    const x = scalars([1, 2, 3]);
    expect(() => fastdtw(x, x, absCost, { radius: 0 })).toThrow(/options\.radius: must be an integer ≥ 1, got 0/);
    expect(() => fastdtw(x, x, absCost, { radius: 1.5 })).toThrow(/options\.radius/);
    expect(() => fastdtw(x, x, absCost, { flavor: 'cython' as FastDtwFlavor })).toThrow(/options\.flavor/);
    expect(() => fastdtw([], x, absCost)).toThrow(/^x: must hold at least one point/);
    expect(() => fastdtw(x, [[1, 2]], absCost)).toThrow(/y\[0\]: has dimension 2, expected 1/);
    expect(() => fastdtw(x, [[Number.NaN]], absCost)).toThrow(/y\[0\]: component 0 is not a finite number/);
    expect(() => fastdtw(x, x, () => Number.NaN)).toThrow(/cost: must return a finite number ≥ 0, got NaN/);
    expect(() => fastdtw(x, x, () => -1)).toThrow(/cost: .*got -1/);
  });

  it('referenceDtw: empty → NaN with a reason; bad embeddings name the symbol', () => {
    const embed = (s: string) => ({ A: [1, 0], B: [0, 1], Z: [0, 0], W: [1, 2, 3], N: [Number.NaN, 1] })[s] as number[];
    expect(referenceDtw([], ['A'], embed)).toEqual({ distance: Number.NaN, normalized: Number.NaN, path: [], undefinedReason: 'empty sequence' });
    expect(referenceDtw(['A'], [], embed).undefinedReason).toBe('empty sequence');
    expect(() => referenceDtw(['A'], ['Q'], embed)).toThrow(/embed: the embedding of "Q" is undefined/);
    expect(() => referenceDtw(['A'], ['Z'], embed)).toThrow(/"Z" is a zero vector/);
    expect(() => referenceDtw(['A'], ['W'], embed)).toThrow(/"W" has dimension 3, expected 2/);
    expect(() => referenceDtw(['A'], ['N'], embed)).toThrow(/"N" has a non-finite component at index 0/);
    expect(() => referenceDtw(['A', 1 as unknown as string], ['A'], embed)).toThrow(/^a: element 1/);
  });

  it('referenceDtw: exactly opposite embeddings averaged by fastdtw to zero are refused, not turned into NaN', () => {
    // Lengths 3 ≥ radius + 2 → coarsening averages [1,0] and [−1,0] to [0,0].
    const embed = (s: string) => (s === 'P' ? [1, 0] : s === 'M' ? [-1, 0] : [0, 1]);
    expect(() => referenceDtw(['P', 'M', 'Q'], ['Q', 'P', 'M'], embed)).toThrow(/embed: embeddings average to a zero vector/);
  });

  it('PreparedSymbolEmbeddings checks the whole table once and names a missing symbol', () => {
    expect(new PreparedSymbolEmbeddings(new Map([['A', [1, 0]]])).dimension).toBe(2);
    expect(() => new PreparedSymbolEmbeddings({ A: [1, 0], B: [1, 0, 0] })).toThrow(/"B" has dimension 3, expected 2/);
    expect(() => new PreparedSymbolEmbeddings({ A: [0, 0] })).toThrow(/"A" is a zero vector/);
    const prepared = new PreparedSymbolEmbeddings({ A: [1, 0], B: [0, 1] });
    expect(referenceDtw(['A', 'B'], ['B'], prepared).distance).toBe(1);
    expect(() => referenceDtw(['A'], ['C'], prepared)).toThrow(/embed: no embedding for symbol "C"/);
    expect(() => referenceDtw(['A'], ['B'], {} as PreparedSymbolEmbeddings)).toThrow(/embed: expected a function or PreparedSymbolEmbeddings/);
  });

  it('referenceDtw embeds each distinct symbol once and scores a hand-computed case', () => {
    const calls: string[] = [];
    const embed = (s: string) => {
      calls.push(s);
      return s === 'A' ? [1, 0] : [0, 1];
    };
    // Costs: A·A = 0, A·B = 1. Lengths 1 and 2 < radius + 2 → exact DTW: path (0,0),(0,1), distance 0 + 1.
    const result = referenceDtw(['A'], ['A', 'B'], embed);
    expect(result.distance).toBe(1);
    expect(result.path).toEqual([
      [0, 0],
      [0, 1],
    ]);
    expect(result.normalized).toBe(0.5);
    expect(calls).toEqual(['A', 'B']);
  });
});
