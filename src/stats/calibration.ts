// Calibration summaries: the operating characteristics of a test or an interval, measured over
// simulated replicates of a design. Every audit's `calibrate` command reduces its simulated runs
// with these functions, so false-positive rates, coverage and power mean the same thing
// everywhere. Pure: the simulation itself belongs to each audit.
import { InvalidArgumentError } from '../core/errors.js';
import { getOrInsert } from '../core/get-or-insert.js';
import { mean, standardNormalCdf, tQuantile } from './distributions.js';

/** One replicate's outcome for one named test (or interval) of a report. */
export interface CalibrationOutcome {
  /** Stable name of the test, e.g. "drift/target=a/headline" — the unit of aggregation. */
  readonly test: string;
  /** p-value of the test in this replicate (NaN or undefined = the test refused: counted apart). */
  readonly p?: number;
  /** Point estimate and its interval, when the test reports one. */
  readonly estimate?: number;
  readonly ci?: readonly [number, number];
  /** The true value of the estimated quantity in the simulation (for coverage and bias). */
  readonly truth?: number;
  /** Standard error of the estimate when the procedure reports one (for the MDE). */
  readonly standardError?: number;
}

export interface RateWithError {
  readonly rate: number;
  /** Monte Carlo standard error, sqrt(rate·(1 − rate) / n). */
  readonly mcSE: number;
  readonly n: number;
}

export interface TestCalibration {
  readonly test: string;
  /** Replicates in which the test produced a p-value. */
  readonly replicates: number;
  /** Replicates in which the procedure refused (no p-value): not counted as rejections. */
  readonly refused: number;
  /** Share of replicates with p < alpha (a false-positive rate under a null, power otherwise). */
  readonly rejection: RateWithError | null;
  /** Share of intervals that contain the truth. */
  readonly coverage: RateWithError | null;
  /** Mean of (estimate − truth) over replicates that report both. */
  readonly bias: number | null;
  /** Mean reported standard error (drives the minimum detectable effect). */
  readonly meanStandardError: number | null;
  /** Mean half-width of the interval. */
  readonly meanHalfWidth: number | null;
}

/** A rate and its Monte Carlo standard error. */
export function rateWithError(successes: number, n: number): RateWithError {
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('n', 'must be a positive integer');
  if (!Number.isInteger(successes) || successes < 0 || successes > n) {
    throw new InvalidArgumentError('successes', `must be an integer in [0, ${n}]`);
  }
  const rate = successes / n;
  return { rate, mcSE: Math.sqrt((rate * (1 - rate)) / n), n };
}

/**
 * Whether an observed false-positive rate is compatible with the nominal level: at most
 * alpha + `tolerance` Monte Carlo standard errors of the nominal rate (the standard error is
 * taken at alpha, not at the observed rate, so that a rate of 0 is not a perfect fit by
 * construction).
 */
export function withinNominal(rate: RateWithError, alpha = 0.05, tolerance = 2): boolean {
  const nominalSE = Math.sqrt((alpha * (1 - alpha)) / rate.n);
  return rate.rate <= alpha + tolerance * nominalSE;
}

const meanOf = (values: readonly number[]): number | null => (values.length === 0 ? null : mean(values));

/** Aggregates replicate outcomes per test name (in first-seen order). */
export function summarizeCalibration(outcomes: Iterable<CalibrationOutcome>, alpha = 0.05): TestCalibration[] {
  if (!(alpha > 0 && alpha < 1)) throw new InvalidArgumentError('alpha', 'must be in (0, 1)');
  const byTest = new Map<string, CalibrationOutcome[]>();
  for (const outcome of outcomes) {
    getOrInsert(byTest, outcome.test, () => []).push(outcome);
  }
  const summaries: TestCalibration[] = [];
  for (const [test, list] of byTest) {
    const tested = list.filter((o) => typeof o.p === 'number' && Number.isFinite(o.p));
    const rejections = tested.filter((o) => (o.p as number) < alpha).length;
    const withInterval = list.filter((o) => o.ci !== undefined && typeof o.truth === 'number' && Number.isFinite(o.ci[0]) && Number.isFinite(o.ci[1]));
    const covered = withInterval.filter((o) => {
      const [low, high] = o.ci as readonly [number, number];
      return low <= (o.truth as number) && (o.truth as number) <= high;
    }).length;
    const biased = list.filter((o) => typeof o.estimate === 'number' && typeof o.truth === 'number' && Number.isFinite(o.estimate));
    summaries.push({
      test,
      replicates: tested.length,
      refused: list.length - tested.length,
      rejection: tested.length > 0 ? rateWithError(rejections, tested.length) : null,
      coverage: withInterval.length > 0 ? rateWithError(covered, withInterval.length) : null,
      bias: meanOf(biased.map((o) => (o.estimate as number) - (o.truth as number))),
      meanStandardError: meanOf(
        list.filter((o) => typeof o.standardError === 'number' && Number.isFinite(o.standardError)).map((o) => o.standardError as number),
      ),
      meanHalfWidth: meanOf(withInterval.map((o) => ((o.ci as readonly [number, number])[1] - (o.ci as readonly [number, number])[0]) / 2)),
    });
  }
  return summaries;
}

/**
 * Minimum detectable effect of a two-sided test at level alpha with the given power, for an
 * estimate with standard error `standardError` on `df` degrees of freedom (Infinity = normal):
 * (q(1 − α/2) + q(power)) · SE. A planning figure: it assumes the estimate is roughly normal.
 */
export function minimumDetectableEffect(standardError: number, options: { alpha?: number; power?: number; df?: number } = {}): number {
  const { alpha = 0.05, power = 0.8, df = Number.POSITIVE_INFINITY } = options;
  if (!(standardError >= 0) || !Number.isFinite(standardError)) {
    throw new InvalidArgumentError('standardError', 'must be a finite non-negative number');
  }
  if (!(alpha > 0 && alpha < 1)) throw new InvalidArgumentError('alpha', 'must be in (0, 1)');
  if (!(power > 0 && power < 1)) throw new InvalidArgumentError('power', 'must be in (0, 1)');
  const degrees = Number.isFinite(df) ? df : 1e6;
  return (tQuantile(1 - alpha / 2, degrees) + tQuantile(power, degrees)) * standardError;
}

/**
 * Power of a two-sided t test at level alpha against a true effect `effect`, for an estimate with
 * standard error `standardError` on `df` degrees of freedom: the normal approximation to the
 * noncentral t, Φ((δ/SE − c·(1 − 1/(4·df))) / √(1 + c²/(2·df))) with c = t(1 − α/2, df). The far
 * tail is left out (negligible wherever power matters). Within 0.01 of the exact noncentral t from
 * 6 degrees of freedom on (scipy's values: src/continuation/__fixtures__/golden-power.json).
 */
export function twoSidedTestPower(effect: number, standardError: number, df: number, alpha = 0.05): number {
  if (!(standardError >= 0) || !Number.isFinite(standardError)) throw new InvalidArgumentError('standardError', 'must be a finite non-negative number');
  if (!(df > 0)) throw new InvalidArgumentError('df', 'must be positive');
  if (!(alpha > 0 && alpha < 1)) throw new InvalidArgumentError('alpha', 'must be in (0, 1)');
  if (standardError === 0) return effect === 0 ? alpha : 1;
  const c = tQuantile(1 - alpha / 2, df);
  const ncp = Math.abs(effect) / standardError;
  return standardNormalCdf((ncp - c * (1 - 1 / (4 * df))) / Math.sqrt(1 + (c * c) / (2 * df)));
}
