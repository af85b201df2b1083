import { InvalidArgumentError } from '../core/errors.js';
import type { DtwPath } from './dtw.js';
import { describeValue, valueText, isVector, requireSymbols, type SymbolSequence } from './validate.js';

/**
 * FastDTW (Salvador & Chan, "Toward accurate dynamic time warping in linear time and space",
 * Intelligent Data Analysis 11(5), 2007) and the `dtw-reference` drift variant of
 * docs/decisions.md#d5: the DriftLens authors' released code scores drift with fastdtw 0.3.4 over the
 * cosine distance between symbol embeddings, normalized by the alignment path length.
 * For comparison with their numbers only; the paper's metric is the exact discrete {@link dtw}.
 *
 * The algorithm: below `radius + 2` elements in either series, exact DTW. Otherwise coarsen both
 * series by averaging adjacent pairs (an odd last element is dropped), solve the coarse problem
 * recursively, widen the coarse path by `radius` cells in every direction, project it onto the
 * full resolution (each coarse cell covers 2 × 2 cells) and run DTW constrained to that window.
 *
 * Two flavours reproduce the two implementations fastdtw 0.3.4 ships, which differ in their
 * tie-breaking and therefore in paths (slaypni/fastdtw issues #25 and #46):
 * - `compiled` (default): the C++/Cython extension a Linux `pip install` builds. Ties prefer the
 *   diagonal: (i−1, j) only when strictly cheapest, else (i, j−1) when strictly cheaper than the
 *   diagonal, else the diagonal. Its window bookkeeping also refuses the diagonal step into a row
 *   from the last cell of the previous row's window, and gives the extra fine row of an odd-length
 *   series the bounds of the last coarse row.
 * - `pure-python`: the fallback module. Ties take the first of (i−1, j), (i, j−1), (i−1, j−1);
 *   the window is exactly the projected union of the (2·radius+1)² squares around the coarse path.
 */

/** A point of a series: a vector (a scalar series uses vectors of length 1). */
export type FastDtwVector = ArrayLike<number>;

/** Local cost between two points; must return a finite number ≥ 0. */
export type FastDtwCost = (a: Float64Array, b: Float64Array) => number;

export type FastDtwFlavor = 'compiled' | 'pure-python';
export const FASTDTW_FLAVORS: readonly FastDtwFlavor[] = ['compiled', 'pure-python'];

export interface FastDtwOptions {
  /** Cells the projected path is widened by at each resolution (integer ≥ 1, default 1 as in fastdtw). */
  readonly radius?: number;
  /** Which fastdtw 0.3.4 implementation to reproduce (default `compiled`). */
  readonly flavor?: FastDtwFlavor;
}

export interface FastDtwResult {
  /** Sum of the local costs along `path`. */
  readonly distance: number;
  /** Monotone, contiguous `[i, j]` pairs from (0, 0) to (n−1, m−1). */
  readonly path: DtwPath;
}

/** Which predecessor a cell was reached from. */
const UP = 0; // (i−1, j)
const LEFT = 1; // (i, j−1)
const DIAGONAL = 2; // (i−1, j−1)
const START = 3;

/** A search window: for each row i, the inclusive column range [lo[i], hi[i]]. */
interface SearchWindow {
  readonly lo: Int32Array;
  readonly hi: Int32Array;
}

function fullWindow(n: number, m: number): SearchWindow {
  return { lo: new Int32Array(n), hi: new Int32Array(n).fill(m - 1) };
}

function checkedCost(cost: FastDtwCost, a: Float64Array, b: Float64Array): number {
  const value: unknown = cost(a, b);
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError('cost', `must return a finite number ≥ 0, got ${valueText(value)}`);
  }
  return value;
}

/**
 * DTW over the cells of `window`. The cumulative cost of a cell is the chosen predecessor's
 * plus the local cost (the first cell: 0 plus its local cost), the same additions fastdtw makes,
 * so equal inputs give bit-identical sums.
 */
function windowedDtw(x: Float64Array[], y: Float64Array[], cost: FastDtwCost, window: SearchWindow, flavor: FastDtwFlavor): FastDtwResult {
  const n = x.length;
  const { lo, hi } = window;
  const rowStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) rowStart[i + 1] = rowStart[i]! + (hi[i]! - lo[i]! + 1);
  const total = rowStart[n]!;
  const D = new Float64Array(total);
  const from = new Uint8Array(total);
  const compiled = flavor === 'compiled';
  for (let i = 0; i < n; i++) {
    const low = lo[i]!;
    const high = hi[i]!;
    const base = rowStart[i]! - low;
    const above = i > 0 ? rowStart[i - 1]! - lo[i - 1]! : 0;
    const aboveLow = i > 0 ? lo[i - 1]! : 0;
    const aboveHigh = i > 0 ? hi[i - 1]! : -1;
    const xi = x[i]!;
    for (let j = low; j <= high; j++) {
      const local = checkedCost(cost, xi, y[j]!);
      if (i === 0 && j === 0) {
        D[base + j] = 0 + local;
        from[base + j] = START;
        continue;
      }
      const up = i > 0 && j >= aboveLow && j <= aboveHigh ? D[above + j]! : Infinity;
      const left = j > low ? D[base + j - 1]! : Infinity;
      // The compiled window bookkeeping has no diagonal into column aboveHigh + 1.
      const diagonalOk = i > 0 && j - 1 >= aboveLow && (compiled ? j <= aboveHigh : j - 1 <= aboveHigh);
      const diagonal = diagonalOk ? D[above + j - 1]! : Infinity;
      // Pure Python keeps the first strict minimum of (up, left, diagonal).
      const move = compiled
        ? up < left && up < diagonal
          ? UP
          : left < diagonal
            ? LEFT
            : DIAGONAL
        : diagonal < Math.min(up, left)
          ? DIAGONAL
          : left < up
            ? LEFT
            : UP;
      D[base + j] = (move === UP ? up : move === LEFT ? left : diagonal) + local;
      from[base + j] = move;
    }
  }
  const m = y.length;
  const distance = D[rowStart[n - 1]! + (m - 1 - lo[n - 1]!)]!;
  if (!Number.isFinite(distance) || hi[n - 1] !== m - 1) {
    throw new Error(`fastdtw: the search window does not connect (0, 0) to (${n - 1}, ${m - 1})`);
  }
  const reversed: Array<readonly [number, number]> = [];
  let i = n - 1;
  let j = m - 1;
  for (;;) {
    reversed.push([i, j]);
    const move = from[rowStart[i]! + j - lo[i]!]!;
    if (move === START) break;
    if (move === UP) i--;
    else if (move === LEFT) j--;
    else {
      i--;
      j--;
    }
  }
  return { distance, path: reversed.reverse() };
}

/** Halves a series by averaging adjacent pairs; an odd last element is dropped (fastdtw's reduce_by_half). */
function coarsen(series: Float64Array[]): Float64Array[] {
  const count = series.length >> 1;
  const dimension = series[0]?.length ?? 0;
  // One buffer per level: views are far cheaper than one allocation per point.
  const buffer = new Float64Array(count * dimension);
  const out: Float64Array[] = new Array(count);
  for (let k = 0; k < count; k++) {
    const a = series[2 * k]!;
    const b = series[2 * k + 1]!;
    const offset = k * dimension;
    if (a === b) {
      // (a + a) / 2 is a exactly: a repeated symbol stays the same vector.
      out[k] = a;
      continue;
    }
    for (let d = 0; d < dimension; d++) buffer[offset + d] = (a[d]! + b[d]!) / 2;
    out[k] = buffer.subarray(offset, offset + dimension);
  }
  return out;
}

/**
 * The fine-resolution window of a coarse path: per coarse row, the column range of the path in
 * the rows within `radius`, widened by `radius`; each coarse row and column covers two fine ones.
 */
function projectWindow(coarsePath: DtwPath, n: number, m: number, radius: number, flavor: FastDtwFlavor): SearchWindow {
  const last = coarsePath[coarsePath.length - 1]!;
  const coarseRows = last[0] + 1;
  const coarseMaxColumn = last[1];
  const pathLow = new Int32Array(coarseRows).fill(-1);
  const pathHigh = new Int32Array(coarseRows);
  for (const [a, b] of coarsePath) {
    if (pathLow[a] === -1) pathLow[a] = b;
    pathHigh[a] = b;
  }
  // Rows past the coarse grid (only the extra row of an odd length is ever used).
  const rows = coarseRows + radius;
  const low = new Int32Array(rows);
  const high = new Int32Array(rows);
  for (let a = 0; a < rows; a++) {
    const beyond = a >= coarseRows;
    if (beyond && flavor === 'compiled') {
      low[a] = low[coarseRows - 1]!;
      high[a] = high[coarseRows - 1]!;
      continue;
    }
    low[a] = Math.max(0, pathLow[Math.max(0, a - radius)]! - radius);
    high[a] = Math.min(coarseMaxColumn + radius, pathHigh[Math.min(coarseRows - 1, a + radius)]! + radius);
  }
  const lo = new Int32Array(n);
  const hi = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const a = i >> 1;
    lo[i] = 2 * low[a]!;
    hi[i] = Math.min(m - 1, 2 * high[a]! + 1);
  }
  return { lo, hi };
}

function solve(x: Float64Array[], y: Float64Array[], cost: FastDtwCost, radius: number, flavor: FastDtwFlavor): FastDtwResult {
  const minSize = radius + 2;
  if (x.length < minSize || y.length < minSize) return windowedDtw(x, y, cost, fullWindow(x.length, y.length), flavor);
  const coarse = solve(coarsen(x), coarsen(y), cost, radius, flavor);
  return windowedDtw(x, y, cost, projectWindow(coarse.path, x.length, y.length, radius, flavor), flavor);
}

function toSeries(value: unknown, argument: string, dimension: { value: number }): Float64Array[] {
  if (!Array.isArray(value)) throw new InvalidArgumentError(argument, `expected an array of vectors, got ${describeValue(value)}`);
  if (value.length === 0) throw new InvalidArgumentError(argument, 'must hold at least one point');
  // A vector object repeated in the series (a repeated symbol) is checked and copied once.
  const converted = new Map<unknown, Float64Array>();
  return value.map((point: unknown, i) => {
    const known = converted.get(point);
    if (known !== undefined) return known;
    if (!isVector(point)) throw new InvalidArgumentError(`${argument}[${i}]`, `expected a vector of numbers, got ${describeValue(point)}`);
    const vector = point as ArrayLike<unknown>;
    if (dimension.value < 0) {
      if (vector.length === 0) throw new InvalidArgumentError(`${argument}[${i}]`, 'is an empty vector');
      dimension.value = vector.length;
    } else if (vector.length !== dimension.value) {
      throw new InvalidArgumentError(`${argument}[${i}]`, `has dimension ${vector.length}, expected ${dimension.value} like the others`);
    }
    const out = new Float64Array(vector.length);
    for (let d = 0; d < vector.length; d++) {
      const component = vector[d];
      if (typeof component !== 'number' || !Number.isFinite(component)) {
        throw new InvalidArgumentError(`${argument}[${i}]`, `component ${d} is not a finite number`);
      }
      out[d] = component;
    }
    if (typeof point === 'object' && point !== null) converted.set(point, out);
    return out;
  });
}

function readOptions(options: FastDtwOptions | undefined): { radius: number; flavor: FastDtwFlavor } {
  const radius = options?.radius ?? 1;
  if (typeof radius !== 'number' || !Number.isInteger(radius) || radius < 1) {
    // fastdtw 0.3.4 mishandles radius 0 on odd lengths (its window misses the last row).
    throw new InvalidArgumentError('options.radius', `must be an integer ≥ 1, got ${String(radius)}`);
  }
  const flavor = options?.flavor ?? 'compiled';
  if (!FASTDTW_FLAVORS.includes(flavor)) {
    throw new InvalidArgumentError('options.flavor', `must be one of ${FASTDTW_FLAVORS.join(', ')}, got ${String(flavor)}`);
  }
  return { radius, flavor };
}

/**
 * FastDTW between two non-empty series of equal-dimension vectors under any local `cost`
 * (see the module comment for the algorithm and the two flavours). O(n·radius) time and memory.
 * The distance is never below the exact DTW distance under the same cost, and equals it when
 * the recursion stops at once (either length < radius + 2) or the widened coarse window covers
 * the whole grid (2·radius ≥ max(n, m)).
 *
 * @throws InvalidArgumentError naming `x`, `y`, `cost`, `options.radius` or `options.flavor`.
 */
export function fastdtw(x: readonly FastDtwVector[], y: readonly FastDtwVector[], cost: FastDtwCost, options?: FastDtwOptions): FastDtwResult {
  const { radius, flavor } = readOptions(options);
  if (typeof cost !== 'function') throw new InvalidArgumentError('cost', `expected a function, got ${describeValue(cost)}`);
  const dimension = { value: -1 };
  return solve(toSeries(x, 'x', dimension), toSeries(y, 'y', dimension), cost, radius, flavor);
}

/**
 * Cosine distance 1 − u·v / (‖u‖‖v‖), clipped to [0, 2] against rounding, as
 * scipy.spatial.distance.cosine computes it. A zero vector has no direction: InvalidArgumentError.
 */
export function cosineDistance(a: FastDtwVector, b: FastDtwVector): number {
  if (a.length !== b.length) throw new InvalidArgumentError('b', `has dimension ${b.length}, expected ${a.length}`);
  let uv = 0;
  let uu = 0;
  let vv = 0;
  for (let d = 0; d < a.length; d++) {
    const u = a[d]!;
    const v = b[d]!;
    uv += u * v;
    uu += u * u;
    vv += v * v;
  }
  if (!(uu > 0)) throw new InvalidArgumentError('a', 'a zero (or non-finite) vector has no cosine distance');
  if (!(vv > 0)) throw new InvalidArgumentError('b', 'a zero (or non-finite) vector has no cosine distance');
  const distance = 1 - uv / Math.sqrt(uu * vv);
  if (Number.isNaN(distance)) throw new InvalidArgumentError('a', 'non-finite components');
  return Math.min(2, Math.max(0, distance));
}

/** Embedding of one symbol string (e.g. all-MiniLM-L6-v2 of the `Category/Subcategory` text). */
export type SymbolEmbedder = (symbol: string) => FastDtwVector;

/** One embedding checked and converted (finite, non-zero, of the shared dimension). */
function checkedEmbedding(value: unknown, symbol: string, dimension: number): Float64Array {
  const where = `the embedding of ${JSON.stringify(symbol)}`;
  if (!isVector(value)) throw new InvalidArgumentError('embed', `${where} is ${describeValue(value)}, expected a vector of numbers`);
  const raw = value as ArrayLike<unknown>;
  if (raw.length === 0 || (dimension >= 0 && raw.length !== dimension)) {
    throw new InvalidArgumentError('embed', `${where} has dimension ${raw.length}, expected ${raw.length === 0 ? 'at least 1' : dimension}`);
  }
  const vector = new Float64Array(raw.length);
  let squares = 0;
  for (let d = 0; d < raw.length; d++) {
    const component = raw[d];
    if (typeof component !== 'number' || !Number.isFinite(component)) {
      throw new InvalidArgumentError('embed', `${where} has a non-finite component at index ${d}`);
    }
    vector[d] = component;
    squares += component * component;
  }
  if (!(squares > 0)) throw new InvalidArgumentError('embed', `${where} is a zero vector (no cosine distance)`);
  return vector;
}

/**
 * A symbol → embedding table checked once (finite, non-zero, one dimension) for many
 * {@link referenceDtw} calls: the per-call checks and copies of a plain embedder are skipped.
 */
export class PreparedSymbolEmbeddings {
  readonly dimension: number;
  private readonly vectors: ReadonlyMap<string, Float64Array>;

  constructor(table: ReadonlyMap<string, FastDtwVector> | Readonly<Record<string, FastDtwVector>>) {
    const entries = table instanceof Map ? [...table.entries()] : Object.entries(table as Record<string, FastDtwVector>);
    const vectors = new Map<string, Float64Array>();
    let dimension = -1;
    for (const [symbol, value] of entries) {
      const vector = checkedEmbedding(value, symbol, dimension);
      dimension = vector.length;
      vectors.set(symbol, vector);
    }
    this.dimension = dimension;
    this.vectors = vectors;
  }

  /** The checked vector of a symbol; InvalidArgumentError when the table has none. */
  get(symbol: string): Float64Array {
    const vector = this.vectors.get(symbol);
    if (vector === undefined) throw new InvalidArgumentError('embed', `no embedding for symbol ${JSON.stringify(symbol)}`);
    return vector;
  }
}

export interface ReferenceDtwResult {
  /** Summed cosine distance along the fastdtw path (the code's raw distance). */
  readonly distance: number;
  /** distance / path length, in [0, 2]; the code's drift. Its score is dtw_score = 1 − normalized. */
  readonly normalized: number;
  readonly path: DtwPath;
  /** Why distance and normalized are NaN (`empty sequence`), else null. */
  readonly undefinedReason: 'empty sequence' | null;
}

/**
 * The `dtw-reference` variant (docs/decisions.md#d5): fastdtw over the cosine distance between the
 * embeddings of the symbols of `a` (the reference trajectory, fastdtw's x) and `b` (the
 * candidate, y), normalized by the path length (≥ max(n, m)). `embed` is a function called
 * once per distinct symbol per call, or a {@link PreparedSymbolEmbeddings} table checked once. Either sequence empty → distance and normalized NaN, path [] and
 * `undefinedReason: 'empty sequence'`, as the authors' compute_dtw_distance returns
 * (their scripts then score NaN as dtw_score 0).
 *
 * @throws InvalidArgumentError naming `a`, `b`, `embed` (a missing, non-finite, zero or
 *   mismatched-dimension embedding) or the options.
 */
export function referenceDtw(
  a: SymbolSequence,
  b: SymbolSequence,
  embed: SymbolEmbedder | PreparedSymbolEmbeddings,
  options?: FastDtwOptions,
): ReferenceDtwResult {
  requireSymbols(a, 'a');
  requireSymbols(b, 'b');
  if (typeof embed !== 'function' && !(embed instanceof PreparedSymbolEmbeddings)) {
    throw new InvalidArgumentError('embed', `expected a function or PreparedSymbolEmbeddings, got ${describeValue(embed)}`);
  }
  const { radius, flavor } = readOptions(options);
  if (a.length === 0 || b.length === 0) return { distance: Number.NaN, normalized: Number.NaN, path: [], undefinedReason: 'empty sequence' };
  let vectorOf: (symbol: string) => Float64Array;
  if (embed instanceof PreparedSymbolEmbeddings) {
    vectorOf = (symbol) => embed.get(symbol);
  } else {
    const vectors = new Map<string, Float64Array>();
    let dimension = -1;
    vectorOf = (symbol) => {
      const known = vectors.get(symbol);
      if (known !== undefined) return known;
      const vector = checkedEmbedding(embed(symbol), symbol, dimension);
      dimension = vector.length;
      vectors.set(symbol, vector);
      return vector;
    };
  }
  let result: FastDtwResult;
  try {
    // vectorOf validated and converted each distinct vector once: skip fastdtw's per-point checks.
    result = solve(a.map(vectorOf), b.map(vectorOf), cosineDistance, radius, flavor);
  } catch (error) {
    // Only a coarsened point can be zero: the mean of exactly opposite embeddings (fastdtw's cosine would be NaN).
    if (error instanceof InvalidArgumentError && (error.argument === 'a' || error.argument === 'b')) {
      throw new InvalidArgumentError(
        'embed',
        'embeddings average to a zero vector at a coarse resolution of fastdtw (exactly opposite vectors): no cosine distance',
      );
    }
    throw error;
  }
  return { distance: result.distance, normalized: result.distance / result.path.length, path: result.path, undefinedReason: null };
}
