import { seededRandom } from '../../src/core/random.js';

/**
 * The reliability campaign's size. CI runs the small size (well under a minute in all);
 * the full size is `RELIABILITY_FULL=1 npx vitest run test/reliability`.
 */
export const FULL = process.env.RELIABILITY_FULL === '1';

export function size(small: number, full: number): number {
  return FULL ? full : small;
}

/** A seeded generator (mulberry32), so a failing case can be replayed from its seed. */
export const seeded = seededRandom;

export const SEED = Number(process.env.RELIABILITY_SEED ?? 20261201);
