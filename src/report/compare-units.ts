import type { PairedDifference, PairedUnit } from '../stats/paired-bootstrap.js';

/**
 * Helpers an audit's `compare` member uses to pair two runs: subjects matched across the runs,
 * the design units both share, and a bootstrap that reports its error instead of throwing.
 */

export const attempt = (f: () => PairedDifference): PairedDifference | { error: string } => {
  try {
    return f();
  } catch (error) {
    return { error: (error as Error).message };
  }
};

/** Rows of A and B to compare: the same subject in both, else (one each, or the same count) in order. */
export function matchSubjects<T>(a: readonly T[], b: readonly T[], key: (x: T) => string): Array<[T, T, string]> {
  const byKey = new Map(b.map((x) => [key(x), x]));
  const shared = a.filter((x) => byKey.has(key(x)));
  if (shared.length > 0) return shared.map((x) => [x, byKey.get(key(x)) as T, key(x)]);
  if (a.length !== b.length) return [];
  return a.map((x, i) => [x, b[i] as T, `${key(x)} ⇄ ${key(b[i] as T)}`]);
}

export function sharedUnits<V>(a: ReadonlyMap<string, V>, b: ReadonlyMap<string, V>, cluster: (unit: string) => string): PairedUnit<V>[] {
  return [...a.keys()]
    .filter((k) => b.has(k))
    .sort()
    .map((k) => ({ cluster: cluster(k), a: a.get(k) as V, b: b.get(k) as V }));
}
