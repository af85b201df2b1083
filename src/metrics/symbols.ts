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

let idsA: Int32Array = new Int32Array(64);
let idsB: Int32Array = new Int32Array(64);

/** Per-id scratch counters for histograms; always all-zero between calls. */
let countsA: Int32Array = new Int32Array(64);
let countsB: Int32Array = new Int32Array(64);

function grown(buffer: Int32Array, needed: number): Int32Array {
  if (buffer.length >= needed) return buffer;
  let size = buffer.length;
  while (size < needed) size *= 2;
  return new Int32Array(size);
}

function internInto(sequence: unknown, argument: string, out: Int32Array): number {
  if (!Array.isArray(sequence)) {
    throw new InvalidArgumentError(argument, `expected an array of symbol strings, got ${describeValue(sequence)}`);
  }
  const length = sequence.length;
  for (let i = 0; i < length; i++) {
    const symbol: unknown = sequence[i];
    if (typeof symbol !== 'string') {
      throw new InvalidArgumentError(argument, `element ${i} must be a string symbol, got ${describeValue(symbol)}`);
    }
    let id = symbolIds.get(symbol);
    if (id === undefined) {
      id = symbolIds.size;
      symbolIds.set(symbol, id);
    }
    out[i] = id;
  }
  return length;
}

/** Interned view of a pair of sequences; valid until the next call to internPair. */
export interface InternedPair {
  readonly a: Int32Array;
  readonly n: number;
  readonly b: Int32Array;
  readonly m: number;
}

const pair = { a: idsA, n: 0, b: idsB, m: 0 };

/**
 * Validates both sequences (arrays of strings) and interns them. The returned object
 * and its buffers are reused by the next call: read them before calling again.
 */
export function internPair(a: unknown, b: unknown, nameA: string, nameB: string): InternedPair {
  if (symbolIds.size > MAX_INTERNED) symbolIds.clear();
  if (Array.isArray(a)) idsA = grown(idsA, a.length);
  if (Array.isArray(b)) idsB = grown(idsB, b.length);
  pair.n = internInto(a, nameA, idsA);
  pair.m = internInto(b, nameB, idsB);
  pair.a = idsA;
  pair.b = idsB;
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
