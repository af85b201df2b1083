/**
 * The CDFs and the t quantile the statistical tests need (Student t, standard normal,
 * chi-square, F), from the regularized incomplete beta and gamma functions evaluated with
 * Lentz's continued fractions and the gamma series. Pure and dependency-free; checked
 * against scipy.stats on a grid of small and huge degrees of freedom, far tails and values
 * next to the median (tools/golden/distributions_grid.py), to 1e-9 relative error.
 *
 * Precision notes: 1 − x is never formed by subtraction (t and F pass both x and 1 − x and
 * their logarithms), log Γ(a + b) − log Γ(a) is taken from Stirling's series when a is
 * large (two huge log-gammas would cancel), and a t probability next to the median is
 * computed as the central mass P(0 < T < |t|) directly rather than as 0.5 minus a tail.
 */

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
  9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** log Γ(x) for x > 0 (Lanczos, g = 7). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let sum = LANCZOS[0] as number;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) sum += (LANCZOS[i] as number) / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** log Γ(x) − [(x − ½) ln x − x + ½ ln 2π] for x ≥ 10 (Stirling's series). */
function stirlingCorrection(x: number): number {
  const x2 = x * x;
  return (1 / 12 - (1 / 360 - (1 / 1260 - 1 / (1680 * x2)) / x2) / x2) / x;
}

/** log Γ(a + b) − log Γ(a). */
function logGammaRatio(a: number, b: number): number {
  if (a < 10) return logGamma(a + b) - logGamma(a);
  return (a - 0.5) * Math.log1p(b / a) + b * Math.log(a + b) - b + stirlingCorrection(a + b) - stirlingCorrection(a);
}

/** −log B(a, b) = log Γ(a + b) − log Γ(a) − log Γ(b). */
function logInverseBeta(a: number, b: number): number {
  const big = Math.max(a, b);
  const small = Math.min(a, b);
  return logGammaRatio(big, small) - logGamma(small);
}

const EPS = 1e-16;
const TINY = 1e-300;
const MAX_ITERATIONS = 100_000;
const guard = (v: number) => (Math.abs(v) < TINY ? TINY : v);

/** The continued fraction of I_x(a, b) (modified Lentz). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  let c = 1;
  let d = 1 / guard(1 - ((a + b) * x) / (a + 1));
  let h = d;
  for (let m = 1; m <= MAX_ITERATIONS; m++) {
    const m2 = 2 * m;
    let term = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 / guard(1 + term * d);
    c = guard(1 + term / c);
    h *= d * c;
    term = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 / guard(1 + term * d);
    c = guard(1 + term / c);
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) return h;
  }
  throw new Error(`incomplete beta: no convergence for a=${a}, b=${b}, x=${x}`);
}

/**
 * Regularized incomplete beta I_x(a, b), given x and y = 1 − x (each computed without
 * cancellation by the caller) and optionally their logarithms.
 */
export function incompleteBeta(x: number, y: number, a: number, b: number, logX = Math.log(x), logY = Math.log(y)): number {
  if (x <= 0) return 0;
  if (y <= 0) return 1;
  const front = logInverseBeta(a, b) + a * logX + b * logY;
  if (x < (a + 1) / (a + b + 2)) return (Math.exp(front) * betaContinuedFraction(a, b, x)) / a;
  return 1 - (Math.exp(front) * betaContinuedFraction(b, a, y)) / b;
}

/** exp(−x + a ln x − log Γ(a)): the common factor of the incomplete gamma functions. */
function gammaFront(a: number, x: number): number {
  return Math.exp(-x + a * Math.log(x) - logGamma(a));
}

function gammaSeries(a: number, x: number): number {
  let term = 1 / a;
  let sum = term;
  let ap = a;
  for (let n = 0; n < MAX_ITERATIONS; n++) {
    ap += 1;
    term *= x / ap;
    sum += term;
    if (Math.abs(term) < Math.abs(sum) * EPS) return sum * gammaFront(a, x);
  }
  throw new Error(`incomplete gamma: no convergence for a=${a}, x=${x}`);
}

function gammaContinuedFraction(a: number, x: number): number {
  let b = x + 1 - a;
  let c = 1 / TINY;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < MAX_ITERATIONS; i++) {
    const an = -i * (i - a);
    b += 2;
    d = 1 / guard(an * d + b);
    c = guard(b + an / c);
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) return gammaFront(a, x) * h;
  }
  throw new Error(`incomplete gamma: no convergence for a=${a}, x=${x}`);
}

/** Regularized lower incomplete gamma P(a, x). */
export function lowerGamma(a: number, x: number): number {
  if (x <= 0) return 0;
  return x < a + 1 ? gammaSeries(a, x) : 1 - gammaContinuedFraction(a, x);
}

/** Regularized upper incomplete gamma Q(a, x) = 1 − P(a, x), accurate in the far tail. */
export function upperGamma(a: number, x: number): number {
  if (x <= 0) return 1;
  return x < a + 1 ? 1 - gammaSeries(a, x) : gammaContinuedFraction(a, x);
}

/** Φ(z), the standard normal CDF: Φ(−|z|) = ½·Q(½, z²/2). */
export function normalCdfOf(z: number): number {
  if (Number.isNaN(z)) return Number.NaN;
  const tail = 0.5 * upperGamma(0.5, (z * z) / 2);
  return z < 0 ? tail : 1 - tail;
}

/** P(T ≤ −s) and P(0 < T < s) for s ≥ 0, each computed directly. */
function tParts(s: number, df: number): { tail: number; centre: number; useTail: boolean } {
  const r = (s * s) / df;
  const x = 1 / (1 + r); // df / (df + s²)
  const y = r / (1 + r); // s² / (df + s²)
  const logX = -Math.log1p(r);
  const logY = Math.log(r) - Math.log1p(r);
  // The incomplete beta's own rule: the tail is computed directly on its side of the mode.
  if (x < (df / 2 + 1) / (df / 2 + 2.5)) {
    const tail = 0.5 * incompleteBeta(x, y, df / 2, 0.5, logX, logY);
    return { tail, centre: 0.5 - tail, useTail: true };
  }
  const centre = 0.5 * incompleteBeta(y, x, 0.5, df / 2, logY, logX);
  return { tail: 0.5 - centre, centre, useTail: false };
}

/** The Student t CDF with `df` > 0 degrees of freedom (Infinity = normal). */
export function tCdfOf(t: number, df: number): number {
  if (Number.isNaN(t) || !(df > 0)) return Number.NaN;
  if (df === Number.POSITIVE_INFINITY) return normalCdfOf(t);
  if (t === 0) return 0.5;
  if (!Number.isFinite(t)) return t < 0 ? 0 : 1;
  const { tail, centre } = tParts(Math.abs(t), df);
  return t < 0 ? tail : 0.5 + centre;
}

function tDensity(t: number, df: number): number {
  return Math.exp(logGammaRatio(df / 2, 0.5) - 0.5 * Math.log(df * Math.PI) - ((df + 1) / 2) * Math.log1p((t * t) / df));
}

/** The t quantile: the t with P(T ≤ t) = p. */
export function tQuantileOf(p: number, df: number): number {
  if (!(p >= 0 && p <= 1) || !(df > 0)) return Number.NaN;
  if (p === 0) return Number.NEGATIVE_INFINITY;
  if (p === 1) return Number.POSITIVE_INFINITY;
  if (p === 0.5) return 0;
  const lower = p < 0.5;
  const q = lower ? p : 1 - p; // lower-tail probability of −s
  const centreTarget = lower ? 0.5 - p : p - 0.5; // exact (Sterbenz) for p near ½
  if (df === 1) return (lower ? -1 : 1) / Math.tan(Math.PI * q); // Cauchy: −cot(πq)
  // Solve for s > 0 with P(T ≤ −s) = q, through whichever part is computed directly.
  const miss = (s: number) => {
    const parts = tParts(s, df);
    return parts.useTail ? q - parts.tail : parts.centre - centreTarget; // increasing in s
  };
  let low = 0;
  let high = 1;
  while (miss(high) < 0) {
    low = high;
    high *= 2;
  }
  let s = (low + high) / 2;
  for (let i = 0; i < 400; i++) {
    const f = miss(s);
    if (f === 0) break;
    if (f < 0) low = s;
    else high = s;
    let next = s - f / tDensity(s, df);
    if (!(next > low && next < high)) next = (low + high) / 2;
    if (Math.abs(next - s) <= 4 * Number.EPSILON * s) {
      s = next;
      break;
    }
    s = next;
  }
  return lower ? -s : s;
}

/** The chi-square CDF with k > 0 degrees of freedom. */
export function chisquareCdfOf(x: number, k: number): number {
  if (Number.isNaN(x) || !(k > 0)) return Number.NaN;
  return x <= 0 ? 0 : lowerGamma(k / 2, x / 2);
}

/** The F CDF with (d1, d2) degrees of freedom. */
export function fCdfOf(x: number, d1: number, d2: number): number {
  if (Number.isNaN(x) || !(d1 > 0) || !(d2 > 0)) return Number.NaN;
  if (x <= 0) return 0;
  if (x === Number.POSITIVE_INFINITY) return 1;
  const r = (d1 * x) / d2;
  return incompleteBeta(r / (1 + r), 1 / (1 + r), d1 / 2, d2 / 2, -Math.log1p(1 / r), -Math.log1p(r));
}
