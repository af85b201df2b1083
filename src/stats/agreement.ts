import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { assertFiniteNumber } from './resampling-common.js';

export interface AgreementOptions {
  /**
   * The ordered categories. Default [0, 1, 2, 3] (the 0–3 judge rubric); 'infer' uses the
   * sorted distinct values seen in either rater.
   */
  categories?: readonly number[] | 'infer';
}

export interface AgreementResult {
  n: number;
  categories: number[];
  /** Share of items with identical scores. */
  exact: number;
  /** Share of items whose scores differ by at most 1 (on the score scale). */
  withinOne: number;
  /** Cohen's κ, unweighted: (p_o − p_e)/(1 − p_e), p_e from the two raters' marginals. */
  kappa: number;
  /**
   * Cohen's κ with quadratic weights w_ij = (i − j)² on category positions:
   * 1 − Σ w·observed / Σ w·expected (as statsmodels cohens_kappa(wt='quadratic') and
   * sklearn cohen_kappa_score(weights='quadratic')).
   */
  kappaQuadratic: number;
  /** confusion[i][j] = items rated categories[i] by a and categories[j] by b. */
  confusion: number[][];
}

/** Agreement between two raters' ordinal scores of the same items (paired by index). */
export function agreement(a: readonly number[], b: readonly number[], options: AgreementOptions = {}): AgreementResult {
  checkScores(a, 'a');
  checkScores(b, 'b');
  if (a.length !== b.length) {
    throw new InvalidArgumentError('b', `length ${b.length} differs from a's ${a.length}; scores are paired by index`);
  }
  if (a.length === 0) throw new StatisticsError('agreement: no scored items');
  const categories = resolveCategories(a, b, options.categories);
  const slot = new Map(categories.map((c, i) => [c, i]));
  const k = categories.length;
  const confusion = categories.map(() => new Array<number>(k).fill(0));
  let exact = 0;
  let withinOne = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    const row = slot.get(x);
    const col = slot.get(y);
    if (row === undefined) throw notACategory('a', i, x, categories);
    if (col === undefined) throw notACategory('b', i, y, categories);
    (confusion[row] as number[])[col] = ((confusion[row] as number[])[col] as number) + 1;
    if (x === y) exact++;
    if (Math.abs(x - y) <= 1) withinOne++;
  }
  const n = a.length;
  const rowTotals = confusion.map((row) => row.reduce((s, v) => s + v, 0));
  const colTotals = categories.map((_, j) => confusion.reduce((s, row) => s + (row[j] as number), 0));

  let observedDisagreement = 0;
  let expectedDisagreement = 0;
  let observedWeighted = 0;
  let expectedWeighted = 0;
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      const observed = ((confusion[i] as number[])[j] as number) / n;
      const expected = ((rowTotals[i] as number) * (colTotals[j] as number)) / (n * n);
      if (i !== j) {
        observedDisagreement += observed;
        expectedDisagreement += expected;
      }
      const w = (i - j) * (i - j);
      observedWeighted += w * observed;
      expectedWeighted += w * expected;
    }
  }
  if (!(expectedDisagreement > 0)) {
    throw new StatisticsError('agreement: both raters used one and the same category for every item; chance agreement is 1 and κ is undefined');
  }
  return {
    n,
    categories,
    exact: exact / n,
    withinOne: withinOne / n,
    kappa: 1 - observedDisagreement / expectedDisagreement,
    kappaQuadratic: 1 - observedWeighted / expectedWeighted,
    confusion,
  };
}

/**
 * Fleiss' κ for a subjects × categories table of rating counts (statsmodels fleiss_kappa,
 * method 'fleiss'). Every subject must have the same number of ratings n ≥ 2.
 * κ = (P̄ − P̄_e)/(1 − P̄_e), P_i = (Σ_j n_ij² − n)/(n(n − 1)), P̄_e = Σ_j p_j².
 */
export function fleissKappa(matrix: readonly (readonly number[])[]): number {
  if (!Array.isArray(matrix)) throw new InvalidArgumentError('matrix', 'expected subjects × categories counts');
  if (matrix.length === 0) throw new StatisticsError('fleissKappa: the table has no subjects');
  const k = matrix[0]?.length ?? 0;
  if (k < 2) throw new InvalidArgumentError('matrix[0]', 'needs at least 2 category columns');
  let raters = -1;
  const categoryTotals = new Array<number>(k).fill(0);
  let agreementSum = 0;
  matrix.forEach((row, i) => {
    if (!Array.isArray(row) || row.length !== k) {
      throw new InvalidArgumentError(`matrix[${i}]`, `expected ${k} category counts like row 0`);
    }
    let total = 0;
    let squares = 0;
    row.forEach((count: unknown, j) => {
      if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
        throw new InvalidArgumentError(`matrix[${i}][${j}]`, `must be a non-negative integer count, got ${String(count)}`);
      }
      total += count;
      squares += count * count;
      categoryTotals[j] = (categoryTotals[j] as number) + count;
    });
    if (raters === -1) raters = total;
    if (total !== raters) {
      throw new InvalidArgumentError(`matrix[${i}]`, `has ${total} ratings; every subject needs the same number (${raters})`);
    }
    if (raters < 2) throw new StatisticsError('fleissKappa: each subject needs at least 2 ratings');
    agreementSum += (squares - raters) / (raters * (raters - 1));
  });
  const grand = matrix.length * raters;
  let chance = 0;
  for (const total of categoryTotals) chance += (total / grand) ** 2;
  if (!(chance < 1)) {
    throw new StatisticsError('fleissKappa: every rating is in one category; chance agreement is 1 and κ is undefined');
  }
  const observed = agreementSum / matrix.length;
  return (observed - chance) / (1 - chance);
}

export type SignLabel = 'agree' | 'flip' | 'null-vs-small';

export interface SignAgreementResult {
  n: number;
  agree: number;
  flip: number;
  nullVsSmall: number;
  /** One label per input pair, in input order. */
  labels: SignLabel[];
}

/**
 * Direction agreement of per-target drift gaps under two judges (ContextEcho Table 7).
 * A gap with |Δ| ≤ tolerance is null. Both null or same sign → 'agree'; exactly one null →
 * 'null-vs-small'; opposite signs, neither null → 'flip'.
 */
export function signAgreement(pairs: ReadonlyArray<readonly [number, number]>, options: { tolerance?: number } = {}): SignAgreementResult {
  if (!Array.isArray(pairs)) throw new InvalidArgumentError('pairs', 'expected [gapJudgeA, gapJudgeB] pairs');
  const tolerance = options.tolerance ?? 1e-9;
  if (typeof tolerance !== 'number' || !(tolerance >= 0) || !Number.isFinite(tolerance)) {
    throw new InvalidArgumentError('tolerance', `must be a finite number ≥ 0, got ${String(tolerance)}`);
  }
  const labels: SignLabel[] = pairs.map((pair, i) => {
    if (!Array.isArray(pair) || pair.length !== 2) {
      throw new InvalidArgumentError(`pairs[${i}]`, 'expected [gapJudgeA, gapJudgeB]');
    }
    const [x, y] = pair;
    assertFiniteNumber(x, `pairs[${i}][0]`);
    assertFiniteNumber(y, `pairs[${i}][1]`);
    const signX = Math.abs(x) <= tolerance ? 0 : Math.sign(x);
    const signY = Math.abs(y) <= tolerance ? 0 : Math.sign(y);
    if (signX === signY) return 'agree';
    if (signX === 0 || signY === 0) return 'null-vs-small';
    return 'flip';
  });
  return {
    n: labels.length,
    agree: labels.filter((l) => l === 'agree').length,
    flip: labels.filter((l) => l === 'flip').length,
    nullVsSmall: labels.filter((l) => l === 'null-vs-small').length,
    labels,
  };
}

function checkScores(values: unknown, argument: string): void {
  if (!Array.isArray(values)) throw new InvalidArgumentError(argument, 'expected an array of scores');
  for (const [i, value] of (values as unknown[]).entries()) assertFiniteNumber(value, `${argument}[${i}]`);
}

function resolveCategories(a: readonly number[], b: readonly number[], categories: AgreementOptions['categories']): number[] {
  if (categories === 'infer') {
    const seen = [...new Set([...a, ...b])].sort((x, y) => x - y);
    if (seen.length < 2) {
      throw new StatisticsError('agreement: only one category was used; κ is undefined');
    }
    return seen;
  }
  const list = categories ?? [0, 1, 2, 3];
  if (!Array.isArray(list) || list.length < 2) {
    throw new InvalidArgumentError('categories', 'needs at least 2 categories (or "infer")');
  }
  list.forEach((c, i) => {
    assertFiniteNumber(c, `categories[${i}]`);
    if (i > 0 && !(c > (list[i - 1] as number))) {
      throw new InvalidArgumentError('categories', 'must be strictly increasing (they are ordinal)');
    }
  });
  return [...list];
}

function notACategory(rater: string, index: number, value: number, categories: readonly number[]): Error {
  return new InvalidArgumentError(
    `${rater}[${index}]`,
    `score ${value} is not one of the categories [${categories.join(', ')}] (pass categories: 'infer' to use the values seen)`,
  );
}
