/**
 * The number formats every report, summary and message uses (one place, so a statistic reads the
 * same on every surface). A missing or non-finite number prints `missing` (default `n/a`).
 */

type Maybe = number | null | undefined;
const finite = (x: Maybe): x is number => typeof x === 'number' && Number.isFinite(x);

/** `+0.25` / `-0.25`: an estimate or difference with its sign. */
export function signed(x: Maybe, digits = 2, missing = 'n/a'): string {
  if (!finite(x)) return missing;
  return x >= 0 ? `+${x.toFixed(digits)}` : x.toFixed(digits);
}

/** `0.250`: a level (a mean, a score). */
export function fixed(x: Maybe, digits = 3, missing = 'n/a'): string {
  return finite(x) ? x.toFixed(digits) : missing;
}

/** `0.031`, or `<0.001` below a thousandth. */
export function pValue(p: Maybe, missing = 'n/a'): string {
  if (!finite(p)) return missing;
  return p < 0.001 ? '<0.001' : p.toFixed(3);
}

/** `+33.7%`: a relative change with its sign. */
export function percent(x: Maybe, digits = 1, missing = 'n/a'): string {
  if (!finite(x)) return missing;
  return `${x >= 0 ? '+' : ''}${(100 * x).toFixed(digits)}%`;
}

/** `33.7%`: a share (no sign). */
export function share(x: Maybe, digits = 1, missing = 'n/a'): string {
  return finite(x) ? `${(100 * x).toFixed(digits)}%` : missing;
}

/** `p = 0.031`, or `p < 0.001` below a thousandth: a p-value in a sentence. */
export function pClause(p: Maybe, missing = 'n/a'): string {
  const text = pValue(p, missing);
  return text.startsWith('<') ? `p ${text.replace('<', '< ')}` : `p = ${text}`;
}
