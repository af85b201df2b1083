/**
 * Copies the named fields of `source` that hold a value onto `target`, in the order given: an
 * optional field that is undefined stays absent instead of becoming an `undefined` member.
 */
export function copyDefined<S extends object, K extends keyof S>(target: { [P in K]?: S[P] }, source: S, keys: readonly K[]): void {
  for (const key of keys) {
    const value = source[key];
    if (value !== undefined) target[key] = value;
  }
}
