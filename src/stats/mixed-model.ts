/**
 * Linear mixed model with one categorical fixed effect (treatment coding) and a
 * random intercept per group:  y = Xβ + Zb + ε,  b ~ N(0, λσ²I),  ε ~ N(0, σ²I).
 *
 * The (restricted) log-likelihood is profiled over λ = σ²_group / σ²_resid:
 * for fixed λ, β and σ² have closed GLS forms, and V = σ²(I + λZZᵀ) is block
 * diagonal with blocks I + λ11ᵀ whose inverse is I − λ/(1 + λnᵍ)·11ᵀ. So each
 * likelihood evaluation needs only per-group sums (O(G·p²) after one O(N·p²)
 * pass). The fit is a 1-D maximisation: the analytic score d logLik/dλ is scanned
 * on a log-λ grid starting at the boundary λ = 0 (a maximum there iff the score
 * at 0 is ≤ 0), each + → − sign change is refined by bracketed root finding,
 * and the highest maximum wins.
 * The criterion is the one lme4 reports (logLik of an lmer fit).
 */
import { InvalidArgumentError, StatisticsError } from '../core/errors.js';
import { normalTwoSidedP } from './distributions.js';
import { cholesky, choleskyInverse, choleskyLogDet, choleskySolve } from './linear-algebra.js';

export type MixedModelMethod = 'REML' | 'ML';

export interface MixedModelOptions {
  /** Key of the numeric response in each row. */
  response: string;
  /** Key of the categorical fixed effect; omit for an intercept-only model. */
  fixed?: string;
  /** Key of the grouping factor that gets a random intercept. */
  group: string;
  /** Reference level of `fixed` (default: the first level in sorted order, as R does). */
  reference?: string;
  method?: MixedModelMethod;
}

export interface FixedEffectEstimate {
  /** '(Intercept)' or the name of a non-reference level. */
  term: string;
  estimate: number;
  se: number;
  z: number;
  /** Two-sided Wald p-value from the standard normal. */
  p: number;
}

export interface MixedModelResult {
  fixed: FixedEffectEstimate[];
  groupVariance: number;
  residualVariance: number;
  /** Maximised log-likelihood (REML criterion for method 'REML'), as lme4's logLik(). */
  logLik: number;
  /** False when the root finder for the score did not meet its tolerance within its budget. */
  converged: boolean;
  /** True when the group variance is estimated at its boundary 0. */
  boundary: boolean;
  method: MixedModelMethod;
  nObs: number;
  nGroups: number;
  reference: string | undefined;
  levels: string[];
}

export interface RandomInterceptDesign {
  /** Row-major N×p design matrix; column 0 must be the intercept. */
  x: Float64Array;
  p: number;
  y: Float64Array;
  /** Group index 0..nGroups−1 of each row. */
  groupIndex: Int32Array;
  nGroups: number;
  /** Names of the p columns. */
  terms: string[];
}

export interface RandomInterceptFit extends Pick<MixedModelResult, 'groupVariance' | 'residualVariance' | 'logLik' | 'converged' | 'boundary'> {
  beta: Float64Array;
  se: Float64Array;
}

const LOG_LAMBDA_MIN = -25;
const LOG_LAMBDA_MAX = 15;
const GRID_STEP = 0.5;

/** Per-group sufficient statistics: everything the profiled likelihood needs. */
interface SufficientStatistics {
  n: number;
  p: number;
  xtx: Float64Array;
  xty: Float64Array;
  yty: number;
  groupSize: Float64Array;
  groupXSum: Float64Array; // nGroups×p
  groupYSum: Float64Array;
  yShift: number;
}

interface Evaluation {
  logLik: number;
  beta: Float64Array;
  factor: Float64Array;
  sigma2: number;
}

function sufficientStatistics(design: RandomInterceptDesign): SufficientStatistics {
  const { x, p, y, groupIndex, nGroups } = design;
  const n = y.length;
  // Centering y only moves the intercept and keeps RSS free of cancellation.
  let yShift = 0;
  for (let i = 0; i < n; i++) yShift += y[i]!;
  yShift /= n;
  const xtx = new Float64Array(p * p);
  const xty = new Float64Array(p);
  let yty = 0;
  const groupSize = new Float64Array(nGroups);
  const groupXSum = new Float64Array(nGroups * p);
  const groupYSum = new Float64Array(nGroups);
  for (let i = 0; i < n; i++) {
    const yi = y[i]! - yShift;
    const g = groupIndex[i]!;
    groupSize[g]! += 1;
    groupYSum[g]! += yi;
    yty += yi * yi;
    for (let a = 0; a < p; a++) {
      const xa = x[i * p + a]!;
      if (xa === 0) continue;
      xty[a]! += xa * yi;
      groupXSum[g * p + a]! += xa;
      for (let b = 0; b < p; b++) xtx[a * p + b]! += xa * x[i * p + b]!;
    }
  }
  return { n, p, xtx, xty, yty, groupSize, groupXSum, groupYSum, yShift };
}

/** Profiled log-likelihood at λ; null when the GLS system is singular or leaves no residual. */
function evaluate(stats: SufficientStatistics, lambda: number, method: MixedModelMethod): Evaluation | null {
  const { n, p, groupSize, groupXSum, groupYSum } = stats;
  const a = Float64Array.from(stats.xtx);
  const b = Float64Array.from(stats.xty);
  let q = stats.yty;
  let logDetH = 0;
  for (let g = 0; g < groupSize.length; g++) {
    const size = groupSize[g]!;
    const shrink = lambda / (1 + lambda * size);
    logDetH += Math.log1p(lambda * size);
    if (shrink === 0) continue;
    const sy = groupYSum[g]!;
    q -= shrink * sy * sy;
    const offset = g * p;
    for (let i = 0; i < p; i++) {
      const si = groupXSum[offset + i]!;
      if (si === 0) continue;
      b[i]! -= shrink * si * sy;
      for (let j = 0; j < p; j++) a[i * p + j]! -= shrink * si * groupXSum[offset + j]!;
    }
  }
  const factor = cholesky(a, p);
  if (factor === null) return null;
  const beta = choleskySolve(factor, p, b);
  let explained = 0;
  for (let i = 0; i < p; i++) explained += beta[i]! * b[i]!;
  const rss = q - explained;
  const dof = method === 'REML' ? n - p : n;
  const sigma2 = rss / dof;
  if (!(sigma2 > 0)) return null;
  let logLik = -0.5 * dof * (1 + Math.log(2 * Math.PI * sigma2)) - 0.5 * logDetH;
  if (method === 'REML') logLik -= 0.5 * choleskyLogDet(factor, p);
  return { logLik, beta, factor, sigma2 };
}

/**
 * d logLik / dλ at an evaluation. With r = y − Xβ̂ and per-group sums Rᵍ = Σ rᵢ:
 *   ½ [ dof·Σ Rᵍ²/(1+λnᵍ)² / rss − Σ nᵍ/(1+λnᵍ) + (REML) Σ sᵍᵀA⁻¹sᵍ/(1+λnᵍ)² ],
 * with sᵍ the group's column sums of X and A = XᵀH⁻¹X. Unlike the criterion,
 * it has no cancellation at the optimum, so its root pins λ down to rounding.
 */
function score(stats: SufficientStatistics, lambda: number, method: MixedModelMethod, at: Evaluation): number {
  const { p, groupSize, groupXSum, groupYSum } = stats;
  let residualTerm = 0;
  let traceTerm = 0;
  let fixedTerm = 0;
  const sums = new Float64Array(p);
  const inverse = method === 'REML' ? choleskyInverse(at.factor, p) : null;
  for (let g = 0; g < groupSize.length; g++) {
    const size = groupSize[g]!;
    const scale = 1 / (1 + lambda * size);
    let residualSum = groupYSum[g]!;
    for (let i = 0; i < p; i++) {
      sums[i] = groupXSum[g * p + i]!;
      residualSum -= sums[i]! * at.beta[i]!;
    }
    residualTerm += residualSum * residualSum * scale * scale;
    traceTerm += size * scale;
    if (inverse !== null) {
      let quadratic = 0;
      for (let i = 0; i < p; i++) {
        let row = 0;
        for (let j = 0; j < p; j++) row += inverse[i * p + j]! * sums[j]!;
        quadratic += sums[i]! * row;
      }
      fixedTerm += quadratic * scale * scale;
    }
  }
  // dof·S/rss = S/σ̂²
  return 0.5 * (residualTerm / at.sigma2 - traceTerm + fixedTerm);
}

/** Root of f in [lo, hi] given f(lo) > 0 ≥ f(hi), by the Illinois false-position method. */
function scoreRoot(f: (lambda: number) => number, lo: number, hi: number, fLoStart: number, fHiStart: number): { lambda: number; converged: boolean } {
  let fLo = fLoStart;
  let fHi = fHiStart;
  if (fHi === 0) return { lambda: hi, converged: true };
  let side = 0;
  for (let iteration = 0; iteration < 300; iteration++) {
    const x = (lo * fHi - hi * fLo) / (fHi - fLo);
    const fx = f(x);
    if (fx === 0 || !(x > lo && x < hi)) return { lambda: x, converged: true };
    if (fx > 0) {
      lo = x;
      fLo = fx;
      if (side === 1) fHi /= 2;
      side = 1;
    } else if (fx < 0) {
      hi = x;
      fHi = fx;
      if (side === -1) fLo /= 2;
      side = -1;
    } else {
      return { lambda: x, converged: false };
    }
    if (hi - lo <= 4 * Number.EPSILON * hi) return { lambda: 0.5 * (lo + hi), converged: true };
  }
  return { lambda: 0.5 * (lo + hi), converged: false };
}

/** Fits the random-intercept model to an already-built design. */
export function fitRandomIntercept(design: RandomInterceptDesign, method: MixedModelMethod = 'REML'): RandomInterceptFit {
  const stats = sufficientStatistics(design);
  const { n, p } = stats;
  if (design.nGroups < 2) {
    throw new StatisticsError(`mixedModel: needs at least 2 groups, got ${design.nGroups}`);
  }
  if (design.nGroups >= n) {
    throw new StatisticsError(
      `mixedModel: ${design.nGroups} groups for ${n} observations; every group needs a second ` +
        'observation for the group and residual variances to be separable',
    );
  }
  if (n - p < 1) {
    throw new StatisticsError(`mixedModel: ${n} observations cannot fit ${p} fixed effects`);
  }
  if (cholesky(stats.xtx, p) === null) {
    throw new StatisticsError('mixedModel: the fixed-effect design is singular');
  }
  const ordinary = evaluate(stats, 0, method);
  if (ordinary === null || !(ordinary.sigma2 > 1e-14 * (stats.yty / n))) {
    throw new StatisticsError('mixedModel: no residual variance (the response is constant or the fixed effects fit it exactly)');
  }
  const slope = (lambda: number): number => {
    const at = evaluate(stats, lambda, method);
    return at === null ? Number.NaN : score(stats, lambda, method, at);
  };
  const logLikAt = (lambda: number): number => evaluate(stats, lambda, method)?.logLik ?? Number.NEGATIVE_INFINITY;
  // Local maxima are where the score turns from + to −. The score is scanned on a log-λ grid
  // (λ = 0 first) and each sign change is refined by root finding; the criterion itself is
  // too flat near a maximum (and too noisy for large λ) to locate λ by comparing its values.
  const steps = Math.round((LOG_LAMBDA_MAX - LOG_LAMBDA_MIN) / GRID_STEP);
  const grid = [0];
  for (let k = 0; k <= steps; k++) grid.push(Math.exp(LOG_LAMBDA_MIN + k * GRID_STEP));
  const slopes = grid.map((lambda, k) => (k === 0 ? score(stats, 0, method, ordinary) : slope(lambda)));
  if (slopes[slopes.length - 1]! > 0) {
    throw new StatisticsError('mixedModel: the response has (almost) no variance within groups; the group/residual ' + 'variance ratio is unbounded');
  }
  const candidates: { lambda: number; logLik: number; converged: boolean }[] = [];
  if (!(slopes[0]! > 0)) candidates.push({ lambda: 0, logLik: ordinary.logLik, converged: true });
  for (let k = 0; k + 1 < grid.length; k++) {
    if (slopes[k]! > 0 && slopes[k + 1]! <= 0) {
      const root = scoreRoot(slope, grid[k]!, grid[k + 1]!, slopes[k]!, slopes[k + 1]!);
      candidates.push({ ...root, logLik: logLikAt(root.lambda) });
    }
  }
  if (candidates.length === 0) {
    throw new StatisticsError('mixedModel: the likelihood has no maximum in the variance-ratio range');
  }
  // The highest maximum wins; within rounding noise, the smaller λ (boundary first).
  let best = candidates[0]!;
  for (const candidate of candidates.slice(1)) {
    if (candidate.logLik > best.logLik + 1e-9 * Math.max(1, Math.abs(best.logLik))) best = candidate;
  }
  const { lambda, converged } = best;
  const fit = evaluate(stats, lambda, method)!;
  const inverse = choleskyInverse(fit.factor, p);
  const se = new Float64Array(p).map((_, i) => Math.sqrt(fit.sigma2 * inverse[i * p + i]!));
  const beta = Float64Array.from(fit.beta);
  beta[0]! += stats.yShift;
  return {
    beta,
    se,
    groupVariance: lambda * fit.sigma2,
    residualVariance: fit.sigma2,
    logLik: fit.logLik,
    converged,
    boundary: lambda === 0,
  };
}

function levelName(value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') {
    return String(value);
  }
  throw new InvalidArgumentError(where, `is ${value === undefined ? 'missing' : (JSON.stringify(value) ?? String(value))}; expected a string or finite number`);
}

/**
 * Linear mixed model with a categorical fixed effect (treatment coding against
 * `reference`) and a random intercept per `group`, fitted by REML (default) or ML.
 * Fixed-effect p-values are Wald z-tests against the standard normal.
 */
export function mixedModel(rows: readonly Record<string, unknown>[], options: MixedModelOptions): MixedModelResult {
  const method = options.method ?? 'REML';
  if (method !== 'REML' && method !== 'ML') {
    throw new InvalidArgumentError('method', `must be 'REML' or 'ML', got ${String(method)}`);
  }
  if (!Array.isArray(rows) || rows.length === 0) {
    throw new StatisticsError('mixedModel: rows is empty');
  }
  for (const key of ['response', 'group'] as const) {
    if (typeof options[key] !== 'string' || options[key] === '') {
      throw new InvalidArgumentError(key, 'must name a key of the rows');
    }
  }
  const n = rows.length;
  const y = new Float64Array(n);
  const groupOf: string[] = [];
  const levelOf: string[] = [];
  for (let i = 0; i < n; i++) {
    const row = rows[i];
    if (row === null || typeof row !== 'object') {
      throw new InvalidArgumentError(`rows[${i}]`, 'is not an object');
    }
    const value = row[options.response];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new InvalidArgumentError(
        `rows[${i}].${options.response}`,
        `is ${value === undefined ? 'missing' : String(value)}; the response must be a finite number`,
      );
    }
    y[i] = value;
    groupOf.push(levelName(row[options.group], `rows[${i}].${options.group}`));
    if (options.fixed !== undefined) {
      levelOf.push(levelName(row[options.fixed], `rows[${i}].${options.fixed}`));
    }
  }
  const groupNames = [...new Set(groupOf)];
  const groupIndexOf = new Map(groupNames.map((name, index) => [name, index]));
  const groupIndex = Int32Array.from(groupOf, (name) => groupIndexOf.get(name)!);

  let levels: string[] = [];
  let reference: string | undefined;
  const terms = ['(Intercept)'];
  if (options.fixed !== undefined) {
    const sorted = [...new Set(levelOf)].sort();
    reference = options.reference ?? sorted[0]!;
    if (!sorted.includes(reference)) {
      throw new InvalidArgumentError(
        'reference',
        `level ${JSON.stringify(reference)} does not occur in ${options.fixed}; levels are ${sorted.map((l) => JSON.stringify(l)).join(', ')}`,
      );
    }
    if (sorted.length < 2) {
      throw new StatisticsError(`mixedModel: ${options.fixed} has a single level (${JSON.stringify(reference)}); nothing to contrast`);
    }
    levels = [reference, ...sorted.filter((level) => level !== reference)];
    terms.push(...levels.slice(1));
  } else if (options.reference !== undefined) {
    throw new InvalidArgumentError('reference', 'given without a fixed effect');
  }
  const p = terms.length;
  const x = new Float64Array(n * p);
  const columnOf = new Map(levels.slice(1).map((level, index) => [level, index + 1]));
  for (let i = 0; i < n; i++) {
    x[i * p] = 1;
    const column = options.fixed === undefined ? undefined : columnOf.get(levelOf[i]!);
    if (column !== undefined) x[i * p + column] = 1;
  }
  const fit = fitRandomIntercept({ x, p, y, groupIndex, nGroups: groupNames.length, terms }, method);
  const fixed = terms.map((term, index) => {
    const estimate = fit.beta[index]!;
    const se = fit.se[index]!;
    const z = estimate / se;
    return { term, estimate, se, z, p: normalTwoSidedP(z) };
  });
  const { beta: _beta, se: _se, ...variances } = fit;
  return {
    fixed,
    ...variances,
    method,
    nObs: n,
    nGroups: groupNames.length,
    reference,
    levels,
  };
}
