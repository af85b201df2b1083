import { expect } from 'vitest';

/**
 * Both endpoints of `got` lie within `tol` of `want`: bootstrap intervals match a reference only
 * to Monte Carlo error, never to the digit. A missing interval fails (NaN is not below `tol`).
 */
export function expectIntervalNear(got: readonly [number, number] | undefined, want: readonly [number, number], tol: number): void {
  expect(Math.abs((got?.[0] as number) - want[0]), `lower ${got?.[0]} vs ${want[0]}`).toBeLessThan(tol);
  expect(Math.abs((got?.[1] as number) - want[1]), `upper ${got?.[1]} vs ${want[1]}`).toBeLessThan(tol);
}
