import { getOrInsert } from '../core/get-or-insert.js';
import { InvalidArgumentError } from '../core/errors.js';
import { describeValue } from './validate.js';

/*
 * Symbol interning for the hot paths (DTW, edit distance, histograms).
 * Symbols are mapped to small integers through one module-level table so that the
 * dynamic programmes compare integers and histograms index typed arrays. The table is
 * an invisible cache: ids only have to be consistent within one call, so it is simply
 * cleared when it grows past MAX_INTERNED (between calls, never during one).
 */
const MAX_INTERNED = 1 << 16;
const symbolIds = new Map<string, number>();

/**
 * A direct-mapped cache in front of the Map: a slot chosen from the length and two
 * characters of the symbol remembers the last symbol seen there and its id. A hit
 * (`===`, so always exact) costs a couple of loads instead of a hash-table probe.
 */
const CACHE_SLOTS = 256;
const cachedSymbols: Array<string | undefined> = new Array<string | undefined>(CACHE_SLOTS).fill(undefined);
const cachedIds = new Int32Array(CACHE_SLOTS);

function slotOf(symbol: string): number {
  const length = symbol.length;
  if (length === 0) return 0;
  return (length * 31 + symbol.charCodeAt(length - 1) * 7 + symbol.charCodeAt(length >> 1)) & (CACHE_SLOTS - 1);
}

/** Per-id scratch counters for histograms; always all-zero between calls. */
let countsA: Int32Array = new Int32Array(64);
let countsB: Int32Array = new Int32Array(64);

function grown(buffer: Int32Array, needed: number): Int32Array {
  if (buffer.length >= needed) return buffer;
  let size = buffer.length;
  while (size < needed) size *= 2;
  return new Int32Array(size);
}

/**
 * One side of a pair: its id buffer plus a memo of the last array interned into it. When the
 * next call passes the same array object and every element is still the identical string
 * (checked one by one, so a mutated array is re-interned), the ids are reused without any
 * table lookups. This makes "several metrics on the same pair" and "one base against many
 * variants" (eq. 17) cost a single interning. The memo holds references to the last array
 * and its strings until the next call.
 */
interface Side {
  ids: Int32Array;
  last: readonly unknown[] | undefined;
  /** The strings of `last`, in its first `count` slots (the array only grows: no length writes). */
  symbols: string[];
  count: number;
}

const sideA: Side = { ids: new Int32Array(64), last: undefined, symbols: [], count: 0 };
const sideB: Side = { ids: new Int32Array(64), last: undefined, symbols: [], count: 0 };

function memoHit(side: Side, sequence: readonly unknown[]): boolean {
  if (side.last !== sequence) return false;
  const symbols = side.symbols;
  const length = sequence.length;
  if (side.count !== length) return false;
  for (let i = 0; i < length; i++) {
    if (sequence[i] !== symbols[i]) return false;
  }
  return true;
}

function internInto(sequence: unknown, argument: string, side: Side): number {
  if (!Array.isArray(sequence)) {
    throw new InvalidArgumentError(argument, `expected an array of symbol strings, got ${describeValue(sequence)}`);
  }
  if (memoHit(side, sequence)) return sequence.length;
  const length = sequence.length;
  side.last = undefined;
  if (side.ids.length < length) side.ids = grown(side.ids, length);
  const out = side.ids;
  const symbols = side.symbols;
  for (let i = 0; i < length; i++) {
    const symbol: unknown = sequence[i];
    if (typeof symbol !== 'string') {
      throw new InvalidArgumentError(argument, `element ${i} must be a string symbol, got ${describeValue(symbol)}`);
    }
    const slot = slotOf(symbol);
    let id: number;
    if (cachedSymbols[slot] === symbol) {
      id = cachedIds[slot]!;
    } else {
      id = getOrInsert(symbolIds, symbol, () => symbolIds.size);
      cachedSymbols[slot] = symbol;
      cachedIds[slot] = id;
    }
    out[i] = id;
    if (i < symbols.length) symbols[i] = symbol;
    else symbols.push(symbol);
  }
  side.count = length;
  side.last = sequence;
  return length;
}

/** Interned view of a pair of sequences; valid until the next call to internPair. */
export interface InternedPair {
  readonly a: Int32Array;
  readonly n: number;
  readonly b: Int32Array;
  readonly m: number;
}

const pair = { a: sideA.ids, n: 0, b: sideB.ids, m: 0 };

/**
 * Validates both sequences (arrays of strings) and interns them. The returned object
 * and its buffers are reused by the next call: read them before calling again.
 */
export function internPair(a: unknown, b: unknown, nameA: string, nameB: string): InternedPair {
  if (symbolIds.size > MAX_INTERNED) {
    symbolIds.clear();
    cachedSymbols.fill(undefined);
    sideA.last = undefined;
    sideB.last = undefined;
  }
  pair.n = internInto(a, nameA, sideA);
  pair.m = internInto(b, nameB, sideB);
  pair.a = sideA.ids;
  pair.b = sideB.ids;
  return pair;
}

const scratch = { countsA, countsB };

/**
 * Scratch histogram counters indexed by symbol id, sized for every id issued so far.
 * Every entry is zero on return; callers must zero the entries they touch before returning.
 */
export function histogramScratch(): { readonly countsA: Int32Array; readonly countsB: Int32Array } {
  const needed = symbolIds.size;
  if (countsA.length < needed) {
    countsA = grown(countsA, needed);
    countsB = grown(countsB, needed);
    scratch.countsA = countsA;
    scratch.countsB = countsB;
  }
  return scratch;
}
