import { InvalidArgumentError } from '../core/errors.js';
import { type InternedPair, internPair } from './symbols.js';
import { describeValue, valueText, isVector, requireSymbols, type SymbolSequence } from './validate.js';

/** An optimal alignment: `[i, j]` pairs (index into `a`, index into `b`), from (0, 0) to (n−1, m−1). */
export type DtwPath = ReadonlyArray<readonly [number, number]>;

/** Embedding of each symbol; every vector used in one call must have the same dimension. */
export type SymbolEmbeddings = ReadonlyMap<string, ArrayLike<number>> | Readonly<Record<string, ArrayLike<number>>>;

/** Local cost of aligning symbol `x` of `a` with symbol `y` of `b`; must return a finite number ≥ 0. */
export type SymbolCostFunction = (x: string, y: string) => number;

export interface DtwOptions {
  /**
   * Local cost c(v_i, u_j). `'discrete'` (default): 1[v_i ≠ u_j] (eq. 1, the paper's main
   * metric). An embedding map: the geometry-aware ‖e(v_i) − e(u_j)‖₂. A function: any cost.
   */
  readonly cost?: 'discrete' | SymbolEmbeddings | SymbolCostFunction;
  /** Compute the alignment path (default true). `false` skips it: memory O(m) instead of O(n·m). */
  readonly path?: boolean;
}

export interface DtwScore {
  /** DTW_raw (eq. 1): the minimum summed local cost over monotone alignment paths. */
  readonly raw: number;
  /** σ_DTW (eq. 2) = raw / max(n, m). In [0, 1] under the discrete cost. */
  readonly normalized: number;
}

export interface DtwResult extends DtwScore {
  readonly path: DtwPath;
}

/** Above this many cells the full matrix needed for the path is refused (4 bytes per cell discrete, 8 with real costs). */
const MAX_PATH_CELLS = 1 << 27;

let sharedMatrix: Int32Array = new Int32Array(256);

function matrixOfSize(cells: number): Int32Array {
  if (sharedMatrix.length < cells) {
    let size = sharedMatrix.length;
    while (size < cells) size *= 2;
    sharedMatrix = new Int32Array(size);
  }
  return sharedMatrix;
}

/**
 * Cumulative cost matrix D for the discrete cost:
 * D(i, j) = 1[a_i ≠ b_j] + min(D(i−1, j−1), D(i−1, j), D(i, j−1)).
 * With `keep`, row i sits at offset i·m (the path needs the whole matrix); without it every
 * row is written over the same m cells. Returns D(n−1, m−1).
 *
 * Integer and branch-free, two rows per pass (each measured on the bench pairs):
 * - `(d | −d) >>> 31` is 1[d ≠ 0]; `q + (t & (t >> 31))` with t = p − q is min(p, q). With
 *   random symbols a compare-and-branch mispredicts often (measured ≈2× slower).
 * - Row i+1 takes its "up" from row i's value still in a register, so a pass reads one stored
 *   row and one symbol per column for two rows, and the two dependency chains (through
 *   `left`) overlap.
 * - Without `keep` all rows share offset 0: within a pass, column j of the stored row is read
 *   before either new row writes it, and column j−1 is carried in `diagonal1`.
 */
function discreteCumulative(pair: InternedPair, keep: boolean, D: Int32Array): number {
  const { a, n, b, m } = pair;
  const a0 = a[0]!;
  let running = 0;
  for (let j = 0; j < m; j++) {
    const differ = a0 ^ b[j]!;
    running = (running + ((differ | -differ) >>> 31)) | 0;
    D[j] = running;
  }
  let i = 1;
  for (; i + 1 < n; i += 2) {
    const above = keep ? (i - 1) * m : 0;
    const row = keep ? above + m : 0;
    const below = keep ? row + m : 0;
    const symbol1 = a[i]!;
    const symbol2 = a[i + 1]!;
    // Column 0: the only predecessor is the cell above.
    let differ = symbol1 ^ b[0]!;
    let diagonal1 = D[above]!;
    let left1 = (diagonal1 + ((differ | -differ) >>> 31)) | 0;
    D[row] = left1;
    differ = symbol2 ^ b[0]!;
    let diagonal2 = left1;
    let left2 = (left1 + ((differ | -differ) >>> 31)) | 0;
    D[below] = left2;
    for (let j = 1; j < m; j++) {
      const symbol = b[j]!;
      const up1 = D[above + j]!;
      let t = diagonal1 - up1;
      let best = up1 + (t & (t >> 31));
      t = best - left1;
      best = left1 + (t & (t >> 31));
      differ = symbol1 ^ symbol;
      left1 = (best + ((differ | -differ) >>> 31)) | 0;
      D[row + j] = left1;
      diagonal1 = up1;
      t = diagonal2 - left1;
      best = left1 + (t & (t >> 31));
      t = best - left2;
      best = left2 + (t & (t >> 31));
      diagonal2 = left1;
      differ = symbol2 ^ symbol;
      left2 = (best + ((differ | -differ) >>> 31)) | 0;
      D[below + j] = left2;
    }
  }
  if (i < n) {
    const above = keep ? (i - 1) * m : 0;
    const row = keep ? above + m : 0;
    const symbol1 = a[i]!;
    let differ = symbol1 ^ b[0]!;
    let diagonal = D[above]!;
    let left = (diagonal + ((differ | -differ) >>> 31)) | 0;
    D[row] = left;
    for (let j = 1; j < m; j++) {
      const up = D[above + j]!;
      let t = diagonal - up;
      let best = up + (t & (t >> 31));
      t = best - left;
      best = left + (t & (t >> 31));
      differ = symbol1 ^ b[j]!;
      left = (best + ((differ | -differ) >>> 31)) | 0;
      D[row + j] = left;
      diagonal = up;
    }
  }
  return D[(keep ? (n - 1) * m : 0) + m - 1]!;
}

/** Same recurrence with real costs supplied one row at a time by `rowCost`. */
function realCumulative(n: number, m: number, rowCost: (i: number, out: Float64Array) => void, keep: boolean, D: Float64Array): number {
  const costs = new Float64Array(m);
  rowCost(0, costs);
  let running = 0;
  for (let j = 0; j < m; j++) {
    running += costs[j]!;
    D[j] = running;
  }
  for (let i = 1; i < n; i++) {
    rowCost(i, costs);
    const row = keep ? i * m : (i & 1) * m;
    const above = keep ? row - m : ((i - 1) & 1) * m;
    let left = D[above]! + costs[0]!;
    D[row] = left;
    for (let j = 1; j < m; j++) {
      const diagonal = D[above + j - 1]!;
      const up = D[above + j]!;
      let best = Math.min(diagonal, up);
      if (left < best) best = left;
      left = best + costs[j]!;
      D[row + j] = left;
    }
  }
  return D[(keep ? (n - 1) * m : ((n - 1) & 1) * m) + m - 1]!;
}

type PathStep = readonly [number, number];

/**
 * Path steps are frozen [i, j] pairs shared between results: a path of ~13 steps would
 * otherwise allocate ~13 small arrays per call (measured ≈ 50 ns of ≈ 600 per bench pair).
 * `stepGrid[i·64 + j]` holds the step (i, j) for i, j < gridFilled (grown on demand up to
 * 64); steps beyond the grid are frozen pairs made for the one result.
 */
const STEP_GRID = 64;
const STEP_SHIFT = 6;
const ORIGIN: PathStep = Object.freeze([0, 0] as const);
/** Filled with ORIGIN up front (a packed array: no holes to check on reads); entries at or beyond gridFilled are never read. */
const stepGrid: PathStep[] = [];
for (let k = 0; k < STEP_GRID * STEP_GRID; k++) stepGrid.push(ORIGIN);
let gridFilled = 1;

function fillStepGrid(size: number): void {
  for (let i = 0; i < size; i++) {
    for (let j = i < gridFilled ? gridFilled : 0; j < size; j++) stepGrid[(i << STEP_SHIFT) | j] = Object.freeze([i, j] as const);
  }
  gridFilled = size;
}

/** Paths up to this long are assembled in a reused array; longer ones in a throwaway one, so no large path stays referenced. */
const PATH_BUFFER_LIMIT = 1 << 12;
let pathBuffer: PathStep[] = [];
for (let k = 0; k < 64; k++) pathBuffer.push(ORIGIN);

function pathAssembly(length: number): PathStep[] {
  if (length <= pathBuffer.length) return pathBuffer;
  let size = pathBuffer.length;
  while (size < length) size *= 2;
  const fresh: PathStep[] = [];
  for (let k = 0; k < size; k++) fresh.push(ORIGIN);
  if (length <= PATH_BUFFER_LIMIT) pathBuffer = fresh;
  return fresh;
}

/**
 * Backtracks from (n−1, m−1) to (0, 0) through the full matrix D, always stepping to the
 * predecessor with the smallest cumulative cost; ties prefer the diagonal (i−1, j−1), then
 * (i−1, j), then (i, j−1). On row 0 / column 0 the only predecessor is taken. Steps are
 * written from the back of a reused array (the path has at most n + m − 1 steps), and the
 * result is one slice of it: an exact-length array with no per-call growth or reversal.
 */
function backtrack(D: Int32Array | Float64Array, n: number, m: number): DtwPath {
  const size = Math.min(Math.max(n, m), STEP_GRID);
  if (size > gridFilled) fillStepGrid(size);
  const end = n + m - 1;
  const steps = pathAssembly(end);
  let position = end;
  let i = n - 1;
  let j = m - 1;
  let cell = i * m + j;
  for (;;) {
    steps[--position] = (i | j) < STEP_GRID ? stepGrid[(i << STEP_SHIFT) | j]! : Object.freeze([i, j] as const);
    if ((i | j) === 0) break;
    if (i === 0) {
      j--;
      cell--;
    } else if (j === 0) {
      i--;
      cell -= m;
    } else {
      const diagonal = D[cell - m - 1]!;
      const up = D[cell - m]!;
      const left = D[cell - 1]!;
      if (diagonal <= up && diagonal <= left) {
        i--;
        j--;
        cell -= m + 1;
      } else if (up <= left) {
        i--;
        cell -= m;
      } else {
        j--;
        cell--;
      }
    }
  }
  return steps.slice(position, end);
}

function embeddingOf(embeddings: SymbolEmbeddings, symbol: string): ArrayLike<number> | undefined {
  if (embeddings instanceof Map) return embeddings.get(symbol);
  const record = embeddings as Readonly<Record<string, ArrayLike<number>>>;
  return Object.hasOwn(record, symbol) ? record[symbol] : undefined;
}

/** Looks up and validates the vectors of one sequence; all must share `dimension` (set by the first). */
function vectorsFor(sequence: SymbolSequence, name: string, embeddings: SymbolEmbeddings, dimension: { value: number }): ArrayLike<number>[] {
  const vectors: ArrayLike<number>[] = [];
  for (let i = 0; i < sequence.length; i++) {
    const symbol = sequence[i]!;
    const vector = embeddingOf(embeddings, symbol);
    if (vector === undefined) {
      throw new InvalidArgumentError('options.cost', `no embedding for symbol ${JSON.stringify(symbol)} (${name}[${i}])`);
    }
    if (!isVector(vector)) {
      throw new InvalidArgumentError('options.cost', `embedding of ${JSON.stringify(symbol)} must be an array of numbers, got ${describeValue(vector)}`);
    }
    if (dimension.value < 0) {
      if (vector.length === 0) {
        throw new InvalidArgumentError('options.cost', `embedding of ${JSON.stringify(symbol)} is empty`);
      }
      dimension.value = vector.length;
    } else if (vector.length !== dimension.value) {
      throw new InvalidArgumentError(
        'options.cost',
        `embedding of ${JSON.stringify(symbol)} has dimension ${vector.length}, expected ${dimension.value} like the others`,
      );
    }
    for (let d = 0; d < vector.length; d++) {
      if (!Number.isFinite(vector[d])) {
        throw new InvalidArgumentError('options.cost', `embedding of ${JSON.stringify(symbol)} has a non-finite component at index ${d}`);
      }
    }
    vectors.push(vector);
  }
  return vectors;
}

function euclideanRows(a: SymbolSequence, b: SymbolSequence, embeddings: SymbolEmbeddings) {
  const dimension = { value: -1 };
  const left = vectorsFor(a, 'a', embeddings, dimension);
  const right = vectorsFor(b, 'b', embeddings, dimension);
  return (i: number, out: Float64Array): void => {
    const x = left[i]!;
    for (let j = 0; j < right.length; j++) {
      const y = right[j]!;
      let sum = 0;
      for (let d = 0; d < x.length; d++) {
        const delta = x[d]! - y[d]!;
        sum += delta * delta;
      }
      out[j] = Math.sqrt(sum);
    }
  };
}

function functionRows(a: SymbolSequence, b: SymbolSequence, cost: SymbolCostFunction) {
  return (i: number, out: Float64Array): void => {
    const x = a[i]!;
    for (let j = 0; j < b.length; j++) {
      const value: unknown = cost(x, b[j]!);
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        throw new InvalidArgumentError(
          'options.cost',
          `cost(${JSON.stringify(x)}, ${JSON.stringify(b[j])}) must be a finite number ≥ 0, got ${valueText(value)}`,
        );
      }
      out[j] = value;
    }
  };
}

type CostMode = { kind: 'discrete' } | { kind: 'embeddings'; embeddings: SymbolEmbeddings } | { kind: 'function'; cost: SymbolCostFunction };

const DISCRETE: CostMode = { kind: 'discrete' };
const DISCRETE_WITH_PATH = { mode: DISCRETE, wantPath: true };
const DISCRETE_NO_PATH = { mode: DISCRETE, wantPath: false };

function readOptions(options: unknown): { mode: CostMode; wantPath: boolean } {
  if (options === undefined) return DISCRETE_WITH_PATH;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError('options', `expected an object, got ${describeValue(options)}`);
  }
  const { cost, path } = options as { cost?: unknown; path?: unknown };
  if (path !== undefined && typeof path !== 'boolean') {
    throw new InvalidArgumentError('options.path', `expected a boolean, got ${describeValue(path)}`);
  }
  const wantPath = path !== false;
  if (cost === undefined || cost === 'discrete') return wantPath ? DISCRETE_WITH_PATH : DISCRETE_NO_PATH;
  if (typeof cost === 'function') return { mode: { kind: 'function', cost: cost as SymbolCostFunction }, wantPath };
  if (cost instanceof Map || (cost !== null && typeof cost === 'object' && !Array.isArray(cost))) {
    return { mode: { kind: 'embeddings', embeddings: cost as SymbolEmbeddings }, wantPath };
  }
  throw new InvalidArgumentError('options.cost', `expected 'discrete', an embedding map (symbol → number[]) or a cost function, got ${describeValue(cost)}`);
}

/**
 * Dynamic Time Warping between two symbol sequences (DriftLens eq. 1–2), exact O(n·m)
 * dynamic programming.
 *
 * Alignment paths are monotone and continuous: they start at (0, 0), end at (n−1, m−1) and
 * step by (1, 0), (0, 1) or (1, 1). `raw` is the minimum summed local cost; `normalized`
 * = raw / max(n, m). With the default discrete cost 1[a_i ≠ b_j], raw is an integer and
 * normalized ∈ [0, 1]; for equal lengths it never exceeds the normalized Hamming distance.
 * `path` is one optimal path; among equally cheap predecessors the backtrack prefers the
 * diagonal, then (i−1, j), then (i, j−1), so `raw` equals the sum of costs along `path`.
 *
 * Edge cases: both sequences empty → raw 0, normalized 0, path []; exactly one empty →
 * normalized 1, raw max(n, m) (one unit per unaligned symbol, in every cost mode), path [].
 * Any string is a symbol under the discrete cost; with an embedding map every symbol that
 * occurs must have an embedding, else InvalidArgumentError.
 *
 * The steps of `path` are frozen `[i, j]` arrays, shared between results when both indices
 * are below 64 (built once, then reused); the `path` array itself is new on every call.
 *
 * Performance: the discrete mode interns symbols to small integers (an array passed again
 * unchanged — e.g. to {@link sriDrift} on the same pair — is not re-interned) and reuses
 * typed-array buffers across calls, allocating only the result; `{ path: false }` also
 * skips the O(n·m) matrix (at most two rows). The vector modes allocate per call.
 *
 * @throws InvalidArgumentError naming `a`, `b`, `options`, `options.path` or `options.cost`
 *   (bad sequences, unknown symbol or mismatched/non-finite embedding, cost function returning
 *   a negative or non-finite value, or a path requested for more than 2^27 cells).
 */
export function dtw(a: SymbolSequence, b: SymbolSequence, options: DtwOptions & { readonly path: false }): DtwScore;
export function dtw(a: SymbolSequence, b: SymbolSequence, options?: DtwOptions): DtwResult;
export function dtw(a: SymbolSequence, b: SymbolSequence, options?: DtwOptions): DtwScore | DtwResult {
  const { mode, wantPath } = readOptions(options);
  let n: number;
  let m: number;
  let pair: InternedPair | undefined;
  if (mode.kind === 'discrete') {
    pair = internPair(a, b, 'a', 'b');
    n = pair.n;
    m = pair.m;
  } else {
    requireSymbols(a, 'a');
    requireSymbols(b, 'b');
    n = a.length;
    m = b.length;
  }
  if (n === 0 || m === 0) {
    const longest = Math.max(n, m);
    const normalized = longest === 0 ? 0 : 1;
    return wantPath ? { raw: longest, normalized, path: [] } : { raw: longest, normalized };
  }
  if (wantPath && n * m > MAX_PATH_CELLS) {
    throw new InvalidArgumentError('a', `sequences of lengths ${n} and ${m} are too long for an alignment path; pass { path: false }`);
  }
  const cells = wantPath ? n * m : 2 * m;
  let raw: number;
  let D: Int32Array | Float64Array;
  if (pair !== undefined) {
    D = matrixOfSize(cells);
    raw = discreteCumulative(pair, wantPath, D);
  } else {
    // User code (cost function, map getters) may re-enter dtw: use a private matrix.
    D = new Float64Array(cells);
    const rows = mode.kind === 'embeddings' ? euclideanRows(a, b, mode.embeddings) : functionRows(a, b, (mode as { cost: SymbolCostFunction }).cost);
    raw = realCumulative(n, m, rows, wantPath, D);
  }
  const normalized = raw / Math.max(n, m);
  return wantPath ? { raw, normalized, path: backtrack(D, n, m) } : { raw, normalized };
}
