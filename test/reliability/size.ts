/**
 * The reliability campaign's size. CI runs the small size (well under a minute in all);
 * the full size is `RELIABILITY_FULL=1 npx vitest run test/reliability`.
 */
export const FULL = process.env.RELIABILITY_FULL === '1';

export function size(small: number, full: number): number {
  return FULL ? full : small;
}

/** A seeded generator (mulberry32), so a failing case can be replayed from its seed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const SEED = Number(process.env.RELIABILITY_SEED ?? 20261201);
