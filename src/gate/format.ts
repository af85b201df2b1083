import type { GateCheck } from './types.js';

/** How gate messages write numbers: 3 decimals (1 from 10 up), signed, percentages. */
export const gateNumber = (x: number) => (Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(3));
export const gateSigned = (x: number) => (x >= 0 ? `+${gateNumber(x)}` : gateNumber(x));
export const gatePercent = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`;

/**
 * A `max-…` check: fails when `size` is above `limit`; the message is `stated`, then whether the size
 * is above or within the limit (written with `format`).
 */
export function limitCheck(
  base: Pick<GateCheck, 'run' | 'audit' | 'subject'>,
  name: string,
  size: number,
  limit: number,
  stated: string,
  format: (x: number) => string,
): GateCheck {
  const fail = size > limit;
  return { ...base, name, status: fail ? 'fail' : 'pass', message: `${stated} ${fail ? 'is above' : 'is within'} the limit ${format(limit)}` };
}
