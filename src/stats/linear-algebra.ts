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

/** A⁻¹ (row-major) from its Cholesky factor, one solve per unit vector; p is small. */
export function choleskyInverse(l: Float64Array, p: number): Float64Array {
  const inverse = new Float64Array(p * p);
  const unit = new Float64Array(p);
  for (let j = 0; j < p; j++) {
    unit.fill(0);
    unit[j] = 1;
    const column = choleskySolve(l, p, unit);
    for (let i = 0; i < p; i++) inverse[i * p + j] = column[i]!;
  }
  return inverse;
}
