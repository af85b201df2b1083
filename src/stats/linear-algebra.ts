/** Small dense symmetric positive-definite helpers (row-major p×p in a Float64Array). */

/** In-place-free Cholesky: returns lower-triangular L with A = LLᵀ, or null when A is not positive definite. */
export function cholesky(a: Float64Array, p: number): Float64Array | null {
  const l = new Float64Array(p * p);
  for (let j = 0; j < p; j++) {
    let diagonal = a[j * p + j]!;
    for (let k = 0; k < j; k++) diagonal -= l[j * p + k]! * l[j * p + k]!;
    if (!(diagonal > 0)) return null;
    const root = Math.sqrt(diagonal);
    l[j * p + j] = root;
    for (let i = j + 1; i < p; i++) {
      let value = a[i * p + j]!;
      for (let k = 0; k < j; k++) value -= l[i * p + k]! * l[j * p + k]!;
      l[i * p + j] = value / root;
    }
  }
  return l;
}

/** Solves LLᵀx = b given the Cholesky factor L. */
export function choleskySolve(l: Float64Array, p: number, b: Float64Array): Float64Array {
  const z = new Float64Array(p);
  for (let i = 0; i < p; i++) {
    let value = b[i]!;
    for (let k = 0; k < i; k++) value -= l[i * p + k]! * z[k]!;
    z[i] = value / l[i * p + i]!;
  }
  const x = new Float64Array(p);
  for (let i = p - 1; i >= 0; i--) {
    let value = z[i]!;
    for (let k = i + 1; k < p; k++) value -= l[k * p + i]! * x[k]!;
    x[i] = value / l[i * p + i]!;
  }
  return x;
}

/** log det(A) = 2 Σ log Lᵢᵢ. */
export function choleskyLogDet(l: Float64Array, p: number): number {
  let sum = 0;
  for (let i = 0; i < p; i++) sum += Math.log(l[i * p + i]!);
  return 2 * sum;
}

/** Diagonal of A⁻¹ from its Cholesky factor (one solve per unit vector; p is small). */
export function choleskyInverseDiagonal(l: Float64Array, p: number): Float64Array {
  const diagonal = new Float64Array(p);
  for (let j = 0; j < p; j++) {
    const unit = new Float64Array(p);
    unit[j] = 1;
    diagonal[j] = choleskySolve(l, p, unit)[j]!;
  }
  return diagonal;
}

/**
 * Brent's method (golden section + parabolic steps) for a minimum of f on [a, b].
 * Returns the abscissa, the value and whether it met the tolerance within maxIterations.
 */
export function brentMinimize(
  f: (x: number) => number,
  a: number,
  b: number,
  tolerance = 1e-10,
  maxIterations = 500,
): { x: number; value: number; converged: boolean } {
  const golden = 0.5 * (3 - Math.sqrt(5));
  let lo = a;
  let hi = b;
  let x = lo + golden * (hi - lo);
  let w = x;
  let v = x;
  let fx = f(x);
  let fw = fx;
  let fv = fx;
  let step = 0;
  let previousStep = 0;
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    const middle = 0.5 * (lo + hi);
    const tol1 = tolerance * Math.abs(x) + 1e-12;
    const tol2 = 2 * tol1;
    if (Math.abs(x - middle) <= tol2 - 0.5 * (hi - lo)) return { x, value: fx, converged: true };
    let useGolden = true;
    if (Math.abs(previousStep) > tol1) {
      const r = (x - w) * (fx - fv);
      let q = (x - v) * (fx - fw);
      let numerator = (x - v) * q - (x - w) * r;
      q = 2 * (q - r);
      if (q > 0) numerator = -numerator;
      else q = -q;
      const olderStep = previousStep;
      previousStep = step;
      if (
        Math.abs(numerator) < Math.abs(0.5 * q * olderStep) &&
        numerator > q * (lo - x) &&
        numerator < q * (hi - x)
      ) {
        step = numerator / q;
        const candidate = x + step;
        if (candidate - lo < tol2 || hi - candidate < tol2) step = middle - x >= 0 ? tol1 : -tol1;
        useGolden = false;
      }
    }
    if (useGolden) {
      previousStep = x >= middle ? lo - x : hi - x;
      step = golden * previousStep;
    }
    const u = Math.abs(step) >= tol1 ? x + step : x + (step >= 0 ? tol1 : -tol1);
    const fu = f(u);
    if (fu <= fx) {
      if (u >= x) lo = x;
      else hi = x;
      v = w;
      fv = fw;
      w = x;
      fw = fx;
      x = u;
      fx = fu;
    } else {
      if (u < x) lo = u;
      else hi = u;
      if (fu <= fw || w === x) {
        v = w;
        fv = fw;
        w = u;
        fw = fu;
      } else if (fu <= fv || v === x || v === w) {
        v = u;
        fv = fu;
      }
    }
  }
  return { x, value: fx, converged: false };
}
