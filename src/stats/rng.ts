import { InvalidArgumentError } from '../core/errors.js';

/**
 * Seeded pseudo-random numbers for every resampling procedure in echolens.
 *
 * Algorithm: xoshiro128** 1.1 (Blackman & Vigna, https://prng.di.unimi.it/), 128-bit state of
 * four 32-bit words, period 2^128 − 1. It runs on 32-bit integer arithmetic, which JavaScript
 * does natively (Math.imul, >>>), so it is fast without BigInt.
 *
 * Seeding: the seed (any safe integer; negative seeds are taken modulo 2^64) initialises a
 * SplitMix64 generator; its first two 64-bit outputs z1, z2 give the state
 * [lo32(z1), hi32(z1), lo32(z2), hi32(z2)]. The same seed always gives the same stream on
 * every platform.
 *
 * - `nextUint32()` — the raw 32-bit output.
 * - `next()` — uniform double in [0, 1) with 53 random bits (two outputs: 27 + 26 bits).
 * - `int(n)` — unbiased integer in [0, n) for 1 ≤ n ≤ 2^32: Lemire's multiply-shift with
 *   rejection for n ≤ 2^21 (the product is exact in a double), plain rejection sampling
 *   otherwise. Either way exactly one or more whole outputs are consumed per call.
 * - `jump()` — advances the stream by 2^64 outputs (the reference jump polynomial).
 * - `fork()` — returns an independent generator: a copy of the current state, after which this
 *   generator jumps 2^64 ahead, so the two streams cannot overlap for 2^64 draws.
 */
export interface Rng {
  readonly seed: number;
  nextUint32(): number;
  next(): number;
  int(n: number): number;
  /**
   * Fills out[0 … count) (default: all of `out`) with independent int(n) draws — the same
   * numbers, in the same order, as calling int(n) count times, in one tight loop (the
   * bootstraps' hot path).
   */
  fillInt(out: Int32Array, n: number, count?: number): Int32Array;
  jump(): void;
  fork(): Rng;
  /** The four state words (to checkpoint a stream; `rngFromState` resumes it). */
  state(): [number, number, number, number];
}

const TWO_POW_32 = 4294967296;
const TWO_POW_53 = 9007199254740992;
const INV_TWO_POW_32 = 1 / TWO_POW_32;
const LEMIRE_LIMIT = 2097152; // 2^21: x·n < 2^53 stays exact
const JUMP = [0x8764000b, 0xf542d2d3, 0x6fa035c3, 0x77f2db5b] as const;
const MASK64 = (1n << 64n) - 1n;

function splitMix64(state: bigint): { value: bigint; state: bigint } {
  const next = (state + 0x9e3779b97f4a7c15n) & MASK64;
  let z = next;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return { value: z ^ (z >> 31n), state: next };
}

/** First outputs of SplitMix64 for a seed, as unsigned BigInts (exposed for tests). */
export function splitMix64Outputs(seed: bigint, count: number): bigint[] {
  let state = seed & MASK64;
  const out: bigint[] = [];
  for (let i = 0; i < count; i++) {
    const step = splitMix64(state);
    state = step.state;
    out.push(step.value);
  }
  return out;
}

class Xoshiro128StarStar implements Rng {
  readonly seed: number;
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number, state: readonly [number, number, number, number]) {
    this.seed = seed;
    this.s0 = state[0] >>> 0;
    this.s1 = state[1] >>> 0;
    this.s2 = state[2] >>> 0;
    this.s3 = state[3] >>> 0;
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) {
      // The all-zero state is a fixed point; SplitMix64 never yields it in practice.
      this.s0 = 1;
    }
  }

  nextUint32(): number {
    const s1 = this.s1;
    const product = Math.imul(s1, 5);
    const result = Math.imul((product << 7) | (product >>> 25), 9) >>> 0;
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= s1;
    this.s1 = s1 ^ this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = (this.s3 << 11) | (this.s3 >>> 21);
    return result;
  }

  next(): number {
    const high = this.nextUint32() >>> 5;
    const low = this.nextUint32() >>> 6;
    return (high * 67108864 + low) / TWO_POW_53;
  }

  int(n: number): number {
    if (n <= LEMIRE_LIMIT && n >= 1 && Number.isInteger(n)) {
      // Lemire: high 32 bits of x·n are the answer; reject the few x whose low bits fall
      // below 2^32 mod n. Scaling by 2^-32 is exact, so no fmod is needed.
      let product = this.nextUint32() * n;
      let high = Math.floor(product * INV_TWO_POW_32);
      let low = product - high * TWO_POW_32;
      if (low < n) {
        const threshold = (TWO_POW_32 - n) % n;
        while (low < threshold) {
          product = this.nextUint32() * n;
          high = Math.floor(product * INV_TWO_POW_32);
          low = product - high * TWO_POW_32;
        }
      }
      return high;
    }
    if (!Number.isInteger(n) || n < 1 || n > TWO_POW_32) {
      throw new InvalidArgumentError('n', `int(n) needs an integer 1 ≤ n ≤ 2^32, got ${n}`);
    }
    const limit = TWO_POW_32 - (TWO_POW_32 % n);
    let x = this.nextUint32();
    while (x >= limit) x = this.nextUint32();
    return x % n;
  }

  fillInt(out: Int32Array, n: number, count = out.length): Int32Array {
    if (!Number.isInteger(count) || count < 0 || count > out.length) {
      throw new InvalidArgumentError('count', `must be an integer in [0, ${out.length}], got ${count}`);
    }
    if (!(n >= 1 && n <= LEMIRE_LIMIT && Number.isInteger(n))) {
      for (let i = 0; i < count; i++) out[i] = this.int(n);
      return out;
    }
    const threshold = (TWO_POW_32 - n) % n;
    let s0 = this.s0;
    let s1 = this.s1;
    let s2 = this.s2;
    let s3 = this.s3;
    for (let i = 0; i < count; i++) {
      let high: number;
      let low: number;
      do {
        // One xoshiro128** step on local copies of the state.
        const product = Math.imul(s1, 5);
        const x = Math.imul((product << 7) | (product >>> 25), 9) >>> 0;
        const t = s1 << 9;
        s2 ^= s0;
        s3 ^= s1;
        s1 ^= s2;
        s0 ^= s3;
        s2 ^= t;
        s3 = (s3 << 11) | (s3 >>> 21);
        const scaled = x * n;
        high = Math.floor(scaled * INV_TWO_POW_32);
        low = scaled - high * TWO_POW_32;
      } while (low < threshold);
      out[i] = high;
    }
    this.s0 = s0 >>> 0;
    this.s1 = s1 >>> 0;
    this.s2 = s2 >>> 0;
    this.s3 = s3 >>> 0;
    return out;
  }

  jump(): void {
    let t0 = 0;
    let t1 = 0;
    let t2 = 0;
    let t3 = 0;
    for (const word of JUMP) {
      for (let bit = 0; bit < 32; bit++) {
        if ((word >>> bit) & 1) {
          t0 ^= this.s0;
          t1 ^= this.s1;
          t2 ^= this.s2;
          t3 ^= this.s3;
        }
        this.nextUint32();
      }
    }
    this.s0 = t0 >>> 0;
    this.s1 = t1 >>> 0;
    this.s2 = t2 >>> 0;
    this.s3 = t3 >>> 0;
  }

  fork(): Rng {
    const child = new Xoshiro128StarStar(this.seed, this.state());
    this.jump();
    return child;
  }

  state(): [number, number, number, number] {
    return [this.s0 >>> 0, this.s1 >>> 0, this.s2 >>> 0, this.s3 >>> 0];
  }
}

function assertSeed(seed: number, argument: string): void {
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed)) {
    throw new InvalidArgumentError(argument, `seed must be a safe integer, got ${String(seed)}`);
  }
}

/** A xoshiro128** generator seeded through SplitMix64 (see the interface for the details). */
export function rng(seed = 42): Rng {
  assertSeed(seed, 'seed');
  const [z1, z2] = splitMix64Outputs(BigInt(seed), 2) as [bigint, bigint];
  return new Xoshiro128StarStar(seed, [Number(z1 & 0xffffffffn), Number(z1 >> 32n), Number(z2 & 0xffffffffn), Number(z2 >> 32n)]);
}

/** A generator started from an explicit state (reference test vectors use [1, 2, 3, 4]). */
export function rngFromState(state: readonly [number, number, number, number]): Rng {
  for (const word of state) {
    if (!Number.isInteger(word) || word < 0 || word >= TWO_POW_32) {
      throw new InvalidArgumentError('state', `each state word must be a uint32, got ${word}`);
    }
  }
  return new Xoshiro128StarStar(0, state);
}

/** Validates a user-supplied seed option (default 42). */
export function resolveSeed(seed: number | undefined, argument = 'seed'): number {
  if (seed === undefined) return 42;
  assertSeed(seed, argument);
  return seed;
}
