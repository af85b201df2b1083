import type { PositionScores } from '../gap-bootstrap.js';
import type { Rng } from '../rng.js';

/** A standard normal draw (Box–Muller). */
export function normal(r: Rng): number {
  let u = 0;
  while (u === 0) u = r.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r.next());
}

/**
 * A trajectory of `positions` positions with `perArm` scores an arm: a shared position level, and a
 * filler − real gap of `gap` that varies by position with SD `gapSpread`.
 */
export function simulateGapScores(r: Rng, positions: number, perArm: number, gap: number, gapSpread: number): PositionScores[] {
  return Array.from({ length: positions }, () => {
    const level = 0.5 * normal(r);
    const positionGap = gap + gapSpread * normal(r);
    return {
      real: Array.from({ length: perArm }, () => 1 + level + normal(r)),
      filler: Array.from({ length: perArm }, () => 1 + level + positionGap + normal(r)),
    };
  });
}
