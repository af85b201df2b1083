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

/** The named fields of `source` that hold a value, as a new object: options passed on without `undefined` members. */
export function definedFields<S extends object, K extends keyof S>(source: S, keys: readonly K[]): { [P in K]?: Exclude<S[P], undefined> } {
  const out: { [P in K]?: S[P] } = {};
  copyDefined(out, source, keys);
  return out as { [P in K]?: Exclude<S[P], undefined> };
}
