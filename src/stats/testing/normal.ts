import type { Rng } from '../rng.js';

/**
 * A standard normal draw from a seeded generator (Box–Muller, the cosine half): the seeded
 * simulations of the tests draw their noise here, two uniforms per draw, in this order.
 */
export function normalDraw(random: Pick<Rng, 'next'>): number {
  const u = 1 - random.next();
  const v = random.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** `normalDraw` of one generator as a function of no arguments. */
export function normalDraws(random: Pick<Rng, 'next'>): () => number {
  return () => normalDraw(random);
}
