/**
 * Dollars as every surface shows them. A cost nobody knows (a model without a price) is
 * "unknown" in text and `null` in JSON — never $0, which is reserved for a price known to be
 * zero (simulations, replays, self-hosted servers).
 */

/** `$0.0123`, or `unknown` for null. */
export function usd(value: number | null, digits = 4): string {
  return value === null ? 'unknown' : `$${value.toFixed(digits)}`;
}

/**
 * A spend summed over cells, `unpricedCells` of which had no known price: the priced part alone
 * when there are none, `unknown (…)` when nothing was priced, `$x + unknown (…)` when some was.
 */
export function spendText(pricedUsd: number, unpricedCells: number, digits = 4): string {
  if (unpricedCells <= 0) return usd(pricedUsd, digits);
  const why = `${unpricedCells} ${unpricedCells === 1 ? 'cell' : 'cells'} without a known price`;
  return pricedUsd > 0 ? `${usd(pricedUsd, digits)} + unknown (${why})` : `unknown (${why})`;
}

/** The spend for JSON: the total when every cell was priced, else null (the priced part travels separately). */
export function spendOrNull(pricedUsd: number, unpricedCells: number): number | null {
  return unpricedCells > 0 ? null : pricedUsd;
}
