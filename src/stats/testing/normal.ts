import type { Rng } from '../rng.js';

/**
 * Standard normal draws from a seeded generator (Box–Muller, the cosine half): the seeded
 * simulations of the tests draw their noise here, two uniforms per draw, in this order.
 */
export function normalDraws(random: Rng): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - random.next())) * Math.cos(2 * Math.PI * random.next());
}
